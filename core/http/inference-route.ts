// The one way a wire plugin mounts an inference endpoint: a Fastify POST route whose body arrives
// as raw bytes (the inference listener's only content-type parser keeps them, see listeners.ts),
// authenticated from its headers before the body is read (relay.ts's onRequest hook), then handed
// to the pipeline, which writes the answer to the raw response. The body schema documents the
// endpoint in /openapi.json; the codec validates, so errors come back in the caller's shape.
import type { TSchema } from '@sinclair/typebox';
import { RelayError } from '../errors.ts';
import type { InboundHttpRequest, ShapeId } from '../hooks.ts';
import type { Attribution, InferenceCall, RelayContext } from '../plugins/context.ts';
import { unroutedError } from '../server/unrouted.ts';
import { isReadMember, mayHoldReasoningById, mayHoldText, parseInferenceJson, readInferenceBody, unsupportedMediaType, type InferenceBody } from './inference-body.ts';
import { duplicateKeyError, keptMembers } from './duplicate-keys.ts';

export interface InferenceRouteOptions {
  url: string;
  shape: ShapeId;
  /** Shape whose codec renders errors when `shape` has none. */
  errorShape?: ShapeId;
  summary: string;
  tags?: string[];
  /** Documented request body (not used to validate). */
  body?: TSchema;
  /** Documented responses by status, Fastify's form; not used to serialize: the pipeline writes the answer itself. */
  responses?: Record<string, unknown>;
  /** Attribution from request headers (agent integrations). */
  attribute?: (request: InboundHttpRequest) => Attribution | undefined;
  /** When false, `stream` is ignored (e.g. embeddings). */
  streams?: boolean;
  /** When false, translation leaves a declared web search tool out (InferenceCall.upstreamWebSearch). */
  upstreamWebSearch?: boolean;
}

const NO_VALIDATION = () => () => true;
// Documented response schemas must not reshape what is sent: errors go out as plain JSON.
const PLAIN_JSON = () => (data: unknown) => JSON.stringify(data);

export function mountInferenceRoute(relay: RelayContext, options: InferenceRouteOptions): void {
  const errorShape = options.errorShape ?? options.shape;
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
      // A POST without a body skips the content-type parser: it is still a JSON endpoint.
      if (!Buffer.isBuffer(request.body)) {
        if (request.headers['content-type'] === undefined) throw unsupportedMediaType();
        throw new RelayError('RELAY_ERR_INVALID_JSON', 'request body is empty; expected a JSON object');
      }
      const raw = request.body;
      const body = readInferenceBody(raw);
      const q = request.url.indexOf('?');
      const call = new RouteCall(
        options.shape, errorShape, raw, body, options.streams !== false && body.stream,
        q >= 0 ? request.url.slice(q) : undefined, options.attribute?.(request), options.upstreamWebSearch,
      );
      reply.hijack(); // the pipeline writes the answer, x-request-id included
      await relay.pipeline.handle(request, reply.raw, call);
    },
  });
}

/** An inference request as the pipeline gets it; the body is parsed only when something asks. */
export class RouteCall implements InferenceCall {
  readonly model: string;
  private parsed: Record<string, unknown> | undefined;

  constructor(
    readonly shape: ShapeId,
    readonly errorShape: ShapeId,
    readonly body: Buffer,
    readonly read: InferenceBody,
    readonly stream: boolean,
    readonly search: string | undefined,
    readonly attribution: Attribution | undefined,
    readonly upstreamWebSearch?: boolean,
  ) {
    this.model = read.model;
  }

  json(): Record<string, unknown> {
    this.parsed ??= parseInferenceJson(this.body, this.read.memberCount);
    return this.parsed;
  }

  member(name: string): unknown {
    if (this.parsed || !isReadMember(name)) return this.json()[name];
    const span = this.read.spans.get(name);
    if (!span) return undefined;
    // The scan accepted the whole body as JSON, so each member's bytes parse on their own.
    const text = this.body.toString('utf8', span.start, span.end);
    const value: unknown = JSON.parse(text);
    // Fewer members kept than the scan counted: a key twice in one object, which an upstream may read otherwise.
    if (span.memberCount > 0 && keptMembers(value) !== span.memberCount) throw duplicateKeyError(text, `/${name}`);
    return value;
  }

  mayHold(text: string): boolean {
    return mayHoldText(this.read, text);
  }

  mayHoldReasoningById(): boolean {
    return mayHoldReasoningById(this.read);
  }

  memberBytes(name: string): Buffer | undefined {
    if (!isReadMember(name)) {
      const value = this.json()[name];
      return value === undefined ? undefined : Buffer.from(JSON.stringify(value));
    }
    const span = this.read.spans.get(name);
    return span ? this.body.subarray(span.start, span.end) : undefined;
  }
}

/**
 * Unknown paths under a wire plugin's prefix get a 404 in that plugin's shape (an OpenAI client
 * asking /vendor-a/v1/nope reads an OpenAI error body, not the canonical one).
 */
export function mountShapedNotFound(relay: RelayContext, prefix: string, shape: ShapeId): void {
  if (!prefix) return;
  relay.inference.register(async (scoped) => {
    scoped.setNotFoundHandler((request, reply) => {
      relay.pipeline.sendError(reply, shape, unroutedError(relay.inference, request.method, request.url));
    });
  }, { prefix });
}
