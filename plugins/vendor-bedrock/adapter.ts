// The Bedrock adapter: Converse/ConverseStream for any model Bedrock serves (translation from
// every client shape), and Anthropic Messages through InvokeModel/InvokeModelWithResponseStream
// (passthrough for Messages clients reaching Claude), and their count_tokens through CountTokens
// (count-tokens.ts counts a prompt for the kernel). Requests are signed with SigV4 (or carry a
// Bedrock API key); streamed answers are decoded from AWS's event-stream framing into SSE;
// Bedrock's exceptions become the statuses health and failover read.
import { Readable } from 'node:stream';
import type { AwsCredentialIdentity } from '@smithy/types';
import { readUpstreamError, sendUpstream, type ShapeId, type UpstreamRequest, type UpstreamResponse, type VendorAdapter } from '../../core/plugin-api.ts';
import { refuseUnlistedStorage } from '../../core/plugin-api/canonical.ts';
import { anthropicErrorBody } from './anthropic-errors.ts';
import * as codec from './codec/index.ts';
import { CONVERSE_SHAPE, COUNTING_SHAPE, MESSAGES_SHAPE, bedrockErrorMessageOf, exceptionName, statusForException } from './codec/index.ts';
import { takesCachePoints, withCachePoints } from './codec/cache-points.ts';
import { chainFor, MalformedHostKey, parseHostKey } from './credentials.ts';
import { converseToSse, eventStreamAsSse, invokeToSse } from './event-stream.ts';
import { BedrockHostOptions, runtimeBaseUrl } from './host-options.ts';
import { countTokensAnswer, countTokensBody, invokeModelBody } from './invoke-body.ts';
import { countBedrockTokens } from './count-tokens.ts';
import { headerValue } from './header-value.ts';
import { signedHeaders } from './signing.ts';

export const BEDROCK_SHAPES: readonly ShapeId[] = [CONVERSE_SHAPE, MESSAGES_SHAPE, COUNTING_SHAPE];

const OPERATIONS: Record<string, { json: string; stream: string }> = {
  [CONVERSE_SHAPE]: { json: 'converse', stream: 'converse-stream' },
  [MESSAGES_SHAPE]: { json: 'invoke', stream: 'invoke-with-response-stream' },
  [COUNTING_SHAPE]: { json: 'count-tokens', stream: 'count-tokens' },
};

/** The request body for a shape: Converse as encoded, Messages as InvokeModel takes it, count_tokens wrapped for CountTokens. */
function bodyFor(req: UpstreamRequest): string {
  const beta = headerValue(req.headers, 'anthropic-beta');
  if (req.shape === MESSAGES_SHAPE) return invokeModelBody(req.body, beta);
  if (req.shape === COUNTING_SHAPE) return countTokensBody(req.body, beta);
  return typeof req.body === 'string' ? req.body : req.body.toString('utf8');
}

/** The runtime URL of an operation on a model (ids, inference profiles and ARNs are one path segment). */
export function operationUrl(options: BedrockHostOptions, upstreamModel: string, operation: string): URL {
  return new URL(`${runtimeBaseUrl(options)}/model/${encodeURIComponent(upstreamModel)}/${operation}`);
}

interface Authentication {
  headers: Record<string, string>;
  /** What of the credential went on the wire besides the host key as written (UpstreamResponse.sentCredentials). */
  sent: string[];
}

/** The headers that authenticate the request: SigV4 (host key or the AWS chain) or a Bedrock API key. */
async function authenticate(req: UpstreamRequest, options: BedrockHostOptions, url: URL, headers: Record<string, string>, body: string): Promise<Authentication> {
  if (options.credentials === 'chain') {
    const identity = await chainFor(req.route.host.metadata.id)();
    return { headers: await signedHeaders({ method: 'POST', url, headers, body }, options.region, identity), sent: sentOf(identity) };
  }
  // Proxy mode: the caller's own Bedrock API key (authorization) is among the forwarded headers.
  if (req.credential === null) {
    const authorization = headerValue(req.headers, 'authorization');
    return { headers: authorization ? { authorization } : {}, sent: [] };
  }
  const credential = parseHostKey(req.credential);
  if (credential.kind === 'bearer') return { headers: { authorization: `Bearer ${credential.token}` }, sent: [credential.token] };
  return { headers: await signedHeaders({ method: 'POST', url, headers, body }, options.region, credential.identity), sent: sentOf(credential.identity) };
}

/** The parts of an AWS identity a signed request carries: its access key id and session token (the secret signs, unsent). */
function sentOf(identity: AwsCredentialIdentity): string[] {
  return identity.sessionToken ? [identity.accessKeyId, identity.sessionToken] : [identity.accessKeyId];
}

/** `res` naming what the request sent of its credential, to be masked out of it. */
function withSent(res: UpstreamResponse, sent: readonly string[] | undefined): UpstreamResponse {
  return sent && sent.length > 0 ? { ...res, sentCredentials: sent } : res;
}

/**
 * A Bedrock error answer with the status Relay acts on (throttling 429, a model not ready 503,
 * ...: errors.ts), and for Messages clients in Anthropic's error body.
 */
async function normalizeError(res: UpstreamResponse, shape: ShapeId): Promise<UpstreamResponse> {
  // Decoded when a proxy compressed it (AWS compresses nothing Relay does not ask for).
  const { bytes, decoded } = await readUpstreamError(res);
  // A coding Relay cannot decode: passed on as it came, and the kernel says it cannot be read.
  if (decoded === null) return { ...res, body: Readable.from([bytes]) };
  const text = decoded.toString('utf8');
  const typeHeader = res.headers['x-amzn-errortype'];
  let bodyType: unknown;
  try {
    bodyType = (JSON.parse(text) as { __type?: unknown }).__type;
  } catch {
    bodyType = undefined;
  }
  const raw = (typeof typeHeader === 'string' ? typeHeader : undefined) ?? (typeof bodyType === 'string' ? bodyType : undefined);
  const status = statusForException(exceptionName(raw), res.status);
  const out = shape !== CONVERSE_SHAPE
    ? Buffer.from(anthropicErrorBody(raw, bedrockErrorMessageOf(text) ?? (text.trim() || `Bedrock answered HTTP ${res.status}`)))
    : decoded;
  const headers: UpstreamResponse['headers'] = { ...res.headers, 'content-type': 'application/json', 'content-length': String(out.length) };
  delete headers['content-encoding'];
  return { status, headers, body: Readable.from([out]) };
}

function asSse(res: UpstreamResponse, shape: ShapeId): UpstreamResponse {
  const headers: UpstreamResponse['headers'] = { ...res.headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  delete headers['content-length'];
  return { status: res.status, headers, body: eventStreamAsSse(res.body, shape === MESSAGES_SHAPE ? invokeToSse : converseToSse) };
}

/** A 403 in Bedrock's shape for a host key Relay cannot sign with; the message never quotes the value. */
function refusedKey(message: string): UpstreamResponse {
  const body = Buffer.from(JSON.stringify({ message }));
  return { status: 403, headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'UnrecognizedClientException' }, body: Readable.from([body]) };
}

/** Sends `body` to an operation on the route's model, signed (or with the Bedrock API key). */
async function sendOperation(req: UpstreamRequest, operation: string, body: string): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  const options = (host.options ?? {}) as BedrockHostOptions;
  // Written before the adapter checked its options (or by hand in the database): no region, no URL.
  if (typeof options.region !== 'string') throw new Error(`the bedrock host ${req.route.host.metadata.slug} has no options.region`);
  const url = operationUrl(options, req.route.upstreamModel, operation);
  // Only these headers go to AWS (and are signed): a client's own headers mean nothing to Bedrock.
  const headers: Record<string, string> = {
    ...(host.headers ?? {}),
    'content-type': 'application/json',
    accept: req.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
  };
  if (req.stream && req.shape === MESSAGES_SHAPE) headers['x-amzn-bedrock-accept'] = 'application/json';
  let auth: Authentication;
  try {
    auth = await authenticate(req, options, url, headers, body);
  } catch (err) {
    // A refused key, as AWS would refuse it: the key is marked invalid and the next one tried (not an unreachable host).
    if (err instanceof MalformedHostKey) return refusedKey(err.message);
    throw err;
  }
  Object.assign(headers, auth.headers);
  return withSent(await sendUpstream(req, url.toString(), { headers, body, timeoutMs: host.timeoutMs }), auth.sent);
}

export interface BedrockAdapterOptions {
  /** Cache points on Converse requests to Claude (codec/cache-points.ts). */
  cacheTranslated: boolean;
}

export function createBedrockAdapter(id: string, adapterOptions: BedrockAdapterOptions = { cacheTranslated: true }): VendorAdapter {
  return {
    id,
    shapes: BEDROCK_SHAPES,
    hostOptions: BedrockHostOptions,
    // The host's baseUrl is not used: requests go to the region's runtime or the endpoint option.
    upstreamBaseUrl: (route) => runtimeBaseUrl((route.host.spec.options ?? {}) as BedrockHostOptions),
    // Converse serves every model, so every client shape translates through it.
    translationShape: (routeShapes) => (routeShapes.includes(CONVERSE_SHAPE) ? CONVERSE_SHAPE : null),
    async send(req: UpstreamRequest): Promise<UpstreamResponse> {
      const operation = OPERATIONS[req.shape];
      if (!operation) throw new Error(`the bedrock adapter does not speak ${req.shape}`);
      const res = await sendOperation(req, req.stream ? operation.stream : operation.json, bodyFor(req));
      if (res.status >= 400) return withSent(await normalizeError(res, req.shape), res.sentCredentials);
      if (req.shape === COUNTING_SHAPE) return withSent(await countTokensAnswer(res), res.sentCredentials);
      return req.stream ? withSent(asSse(res, req.shape), res.sentCredentials) : res;
    },
    countTokens: (req) => countBedrockTokens(req, (body) => sendOperation({ ...req, shape: COUNTING_SHAPE, stream: false }, 'count-tokens', body)),
    encodeRequest(shape, request, route, dropped) {
      refuseUnlistedStorage(request, {
        isStorage: (url) => url.startsWith('s3://'),
        allowed: (route.host.spec.options as BedrockHostOptions | undefined)?.storageLocations,
        model: route.model?.metadata.slug ?? route.upstreamModel,
      });
      const body = codec.encodeRequest(shape, request, route, dropped);
      const cached = adapterOptions.cacheTranslated && shape === CONVERSE_SHAPE && takesCachePoints(route.upstreamModel);
      return cached ? withCachePoints(body as Record<string, unknown>) : body;
    },
    decodeResponse: codec.decodeResponse,
    streamDecoder: codec.streamDecoder,
    decodeError: codec.decodeError,
    usageFromBody: codec.usageFromBody,
    streamInspector: codec.streamInspector,
  };
}
