// The one way a wire plugin mounts an inference endpoint: read `model` and `stream` from the
// JSON body (nothing else is parsed on passthrough), then hand the request to the pipeline.
// The body schema is documentation for /openapi.json; the codec validates, so that errors
// come back in the caller's shape rather than as Fastify's generic 400.
import type { TSchema } from '@sinclair/typebox';
import type { ClientResponse } from './client-response.ts';
import { BodyBytes } from './body-bytes.ts';
import { RelayError } from '../errors.ts';
import type { InboundHttpRequest, ShapeId } from '../hooks.ts';
import type { Attribution, InferenceCall, RelayContext } from '../plugins/context.ts';
import { checkInferenceBody, isJsonContentType, unsupportedMediaType, type InferenceBody } from './inference-body.ts';

export interface InferenceRouteOptions {
  url: string;
  shape: ShapeId;
  /** Shape whose codec renders errors when `shape` has none. */
  errorShape?: ShapeId;
  summary: string;
  tags?: string[];
  /** Documented request body (not used to validate). */
  body?: TSchema;
  /** Documented responses by status, Fastify's form (`{ 200: { description, content: { <media type>: { schema } } } }`);
   * not used to serialize: the pipeline writes the answer itself. */
  responses?: Record<string, unknown>;
  /** Attribution from request headers (agent integrations). */
  attribute?: (request: InboundHttpRequest) => Attribution | undefined;
  /** When false, `stream` is ignored (e.g. embeddings). */
  streams?: boolean;
}

const NO_VALIDATION = () => () => true;
// Documented response schemas must not reshape what is sent (fast-json-stringify would drop
// fields the schema does not list): errors rendered through reply.send go out as plain JSON.
const PLAIN_JSON = () => (data: unknown) => JSON.stringify(data);

/**
 * Mounts a POST endpoint twice over: in the inference lane, which serves it before Fastify (see
 * inference-lane.ts), and as a Fastify route, which documents it in /openapi.json and serves
 * requests that reach Fastify without the lane (app.inject in tests).
 */
export function mountInferenceRoute(relay: RelayContext, options: InferenceRouteOptions): void {
  const errorShape = options.errorShape ?? options.shape;
  const serve = (request: InboundHttpRequest, res: ClientResponse, body: InferenceBody, raw: BodyBytes): Promise<void> => {
    const q = request.url.indexOf('?');
    return relay.pipeline.handle(request, res, new RouteCall(
      options.shape, errorShape, raw, body, options.streams !== false && body.stream,
      q >= 0 ? request.url.slice(q) : undefined, options.attribute?.(request),
    ));
  };
  relay.inferenceLane.add(options.url, { errorShape, serve });
  relay.inference.route({
    method: 'POST',
    url: options.url,
    config: { shape: errorShape, recordedByPipeline: true },
    validatorCompiler: NO_VALIDATION,
    serializerCompiler: PLAIN_JSON,
    schema: {
      summary: options.summary,
      tags: options.tags,
      security: [{ relayKey: [] }],
      ...(options.body ? { body: options.body } : {}),
      ...(options.responses ? { response: options.responses } : {}),
    },
    handler: async (request, reply) => {
      // Fastify also parses text/plain; an inference body is JSON or nothing.
      if (!isJsonContentType(request.headers['content-type'])) throw unsupportedMediaType();
      const body = checkInferenceBody(request.body);
      reply.hijack(); // the pipeline writes the answer, x-request-id included
      await serve(request, reply.raw, body, BodyBytes.of(request.rawBody ?? Buffer.from(JSON.stringify(body.json))));
    },
  });
}

/**
 * An inference request as the pipeline gets it. `json` is the body's, read when first asked for:
 * passthrough never asks unless it must rewrite the body, so an agent's big body is not parsed
 * (inference-body.ts); nor does it ask for `body`, the bytes as one Buffer, but forwards `bytes`,
 * the chunks they came in (body-bytes.ts). Both are let go at the answer's first byte (releaseCall).
 * A class: an object literal with a getter is slow to make (see AttemptUpstreamRequest in attempt.ts).
 */
class RouteCall implements InferenceCall {
  readonly model: string;

  constructor(
    readonly shape: ShapeId,
    readonly errorShape: ShapeId,
    readonly bytes: BodyBytes,
    private readonly parsed: InferenceBody,
    readonly stream: boolean,
    readonly search: string | undefined,
    readonly attribution: Attribution | undefined,
  ) {
    this.model = parsed.model;
  }

  get body(): Buffer {
    return this.bytes.joined();
  }

  get json(): Record<string, unknown> {
    return this.parsed.json;
  }

  release(): void {
    this.bytes.release();
    this.parsed.release();
  }
}

/**
 * Lets go of what a call's request holds, its bytes and its parsed JSON; reading `body` or `json`
 * after it throws. The pipeline calls it at the answer's first byte, past which nothing is sent
 * again (no failover): an agent's stream lasts seconds to minutes (body-bytes.ts).
 */
export function releaseCall(call: InferenceCall): void {
  if (call instanceof RouteCall) call.release();
}

/**
 * Unknown paths under a wire plugin's prefix get a 404 in that plugin's shape (an OpenAI client
 * asking /vendor-a/v1/nope reads an OpenAI error body, not the canonical one).
 */
export function mountShapedNotFound(relay: RelayContext, prefix: string, shape: ShapeId): void {
  if (!prefix) return;
  relay.inference.register(async (scoped) => {
    scoped.setNotFoundHandler((request, reply) => {
      relay.pipeline.sendError(reply, shape, new RelayError('RELAY_ERR_NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`));
    });
  }, { prefix });
}
