// The whole contract between the kernel and plugins: four hooks and the types they carry.
//
//   authenticate(req)            chain: the first provider that returns a principal wins
//   resolveModel(principal, m)   one: ordered candidate routes, or a typed 403/404/503
//   dispatch(route, request)     one vendor adapter per provider: raw passthrough or canonical
//   record(event)                fan-out, detached: after the response, never delaying it
//
// Wire plugins sit at the edges and register an InboundCodec for their shape.
import type { IncomingHttpHeaders } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import type { CanonicalRequest, CanonicalResponse, StreamEvent, Usage } from './canonical/types.ts';
import type { Host, HostKey, Model, ModelBinding, Policy, Provider, RelayKey } from './catalog/kinds.ts';
import type { RelayErrorBody } from './errors.ts';
import type { UpstreamClient } from './http/upstream-client.ts';
import type { InferenceCall } from './plugins/context.ts';
import type { HostKeyMask } from './pipeline/credential-scrub.ts';

/**
 * A wire shape. Built-in ids: openai.chat, openai.responses, openai.embeddings,
 * anthropic.messages, anthropic.count_tokens, canonical. In-house plugins add their own.
 */
export type ShapeId = string;

// ---------------------------------------------------------------- authenticate

/** What the pipeline reads of an inbound HTTP request (a FastifyRequest is one). */
export interface InboundHttpRequest {
  /** Relay's request id (also the x-request-id response header). */
  id: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Set by the kernel once the request was authenticated from its headers (before its body is read). */
  principal?: Principal;
}

export interface InboundRequest extends InboundHttpRequest {
  /** The wire shape the request arrived in. */
  shape: ShapeId;
}

export interface Principal {
  relayKey: RelayKey;
  policy: Policy;
  /** Kind of client, when an integration recognises it: `codex`, `claude-code`. */
  client?: string;
  /** Attribution recorded in the usage event (header values, never credentials). */
  extras?: Record<string, string>;
  /**
   * Proxy mode: the caller's own upstream credential headers, sent instead of a host key.
   * Never logged, never used for another caller.
   */
  passthroughCredential?: Record<string, string>;
  /** Proxy mode: a host named explicitly by the caller (id or slug). */
  explicitHost?: string;
}

/**
 * Returns a principal when the request carries this provider's credential and it is
 * valid; null when the request does not carry it (the next provider is asked);
 * throws a RelayError (401) when it carries it and it is invalid.
 */
export type Authenticator = (req: InboundRequest) => Principal | null | Promise<Principal | null>;

// ---------------------------------------------------------------- resolveModel

export interface Route {
  model: Model;
  binding: ModelBinding;
  host: Host;
  provider: Provider;
  /** Null in proxy mode, where the caller's own credential is used. */
  hostKey: HostKey | null;
  upstreamModel: string;
  adapter: VendorAdapter;
  /** Shapes this route's upstream speaks (the adapter's, narrowed by the provider). */
  shapes: readonly ShapeId[];
}

export interface ResolveOptions {
  /** The inbound shape; routes whose upstream cannot serve it (even by translation) are left out. */
  shape: ShapeId;
}

/** Ordered candidates, best first. Throws RelayError 403/404/503. */
export type ModelResolver = (principal: Principal, model: string, options: ResolveOptions) => Route[];

// ---------------------------------------------------------------- dispatch

export interface UpstreamRequest {
  route: Route;
  /** The upstream shape the body is in. */
  shape: ShapeId;
  /** The body to send. */
  body: Buffer | string;
  /**
   * Headers to forward. In passthrough this is what the client sent minus hop-by-hop
   * and credential headers; the adapter adds the host key (or the proxy-mode credential).
   */
  headers: Record<string, string>;
  /**
   * The host key's secret, resolved by the kernel (env or opened from its sealed value);
   * null in proxy mode, where the caller's own credential is in `headers`.
   */
  credential: string | null;
  /** Query string to append to the shape's endpoint, e.g. `?beta=true`. */
  search?: string;
  stream: boolean;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** The Relay instance's upstream HTTP client: send with sendToHost or sendUpstream, which use it. */
  client: UpstreamClient;
}

/**
 * An upstream response body: the bytes as they arrive, read with for-await. A Node Readable is
 * one (an adapter may build its own, e.g. `Readable.from([bytes])`).
 */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /** Reads the rest and throws it away (the connection stays reusable). */
  resume(): unknown;
  /** Stops reading and aborts the upstream request. */
  destroy(err?: Error): unknown;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
  /**
   * Optional: secrets this call sent that were made from the host key (an access token it was
   * issued, a signing key id, a session token). The kernel masks them out of the answer as it
   * masks the host key, since an upstream may quote them back.
   */
  sentCredentials?: readonly string[];
}

/** What a stream's frames showed so far (StreamInspector.inspect). */
export type StreamSeen = 'opening' | 'output' | 'error' | 'content_filter';

/** Reads usage and output progress from an upstream stream in the adapter's shape. */
export interface StreamInspector {
  /**
   * Classifies one SSE frame: `opening` carries no output (response.created, message_start, ping),
   * `output` carries output, `error` is an in-stream error (fails over if nothing was sent yet),
   * `content_filter` ends the answer for the vendor's content filter (or a refusal) before any
   * output (a model fallback taking content_filter answers instead, if nothing was sent yet).
   */
  inspect(event: string | undefined, data: string): StreamSeen;
  /** Usage seen so far (final once the stream ended). */
  usage(): Usage | null;
}

/** Turns upstream SSE frames in the adapter's shape into canonical stream events. */
export interface StreamDecoder {
  decode(event: string | undefined, data: string): StreamEvent[];
  /** Called at end of stream; returns closing events if the upstream left parts open. */
  finish(): StreamEvent[];
  /**
   * Optional: the usage the upstream reported so far, for a stream cut before its end event (a
   * vendor that reports the prompt in its first frame, as Anthropic's message_start does).
   */
  usage?(): Usage | null;
}

export interface VendorAdapter {
  /** Matches `providers.spec.adapter`. */
  id: string;
  /** Shapes the vendor's upstream speaks natively. */
  shapes: readonly ShapeId[];
  /**
   * Optional: the schema of a host's `spec.options` for this vendor (an API version, a region),
   * checked when a host is written (a 400 naming the option) and shown in the dashboard's host
   * form. The adapter reads them as `req.route.host.spec.options`.
   */
  hostOptions?: TSchema;
  /**
   * Optional: why a host's `spec.baseUrl` cannot work with this vendor (it ends with an endpoint
   * path the adapter appends itself), or null. Checked when a host is written: a 400 on /spec/baseUrl.
   */
  baseUrlProblem?(baseUrl: string): string | null;
  /**
   * Optional: the base URL this adapter sends a route's requests to when it is not the host's
   * `spec.baseUrl` (Bedrock's runtime comes from its region or endpoint option); traces name its server.
   */
  upstreamBaseUrl?(route: Route): string;
  /** The native shape to translate through, from the shapes a route allows, or null if none fits. */
  translationShape(routeShapes: readonly ShapeId[], inbound: ShapeId): ShapeId | null;
  /** Sends a request in `shape`; resolves when response headers arrive. */
  send(req: UpstreamRequest): Promise<UpstreamResponse>;
  /**
   * canonical -> upstream request JSON. `request` is the one for `route`: its model is the route's
   * upstream model, `stream` is set, and `reasoning` is left out for a model the catalog does not
   * mark `reasoning: true`. What the upstream shape cannot carry and the encoder leaves out is
   * pushed onto `dropped` by name (a translated response lists it in x-relay-dropped).
   */
  encodeRequest(shape: ShapeId, request: CanonicalRequest, route: Route, dropped?: string[]): unknown;
  /**
   * upstream response JSON -> canonical; `request` is the canonical request that was sent. What
   * the answer holds that canonical cannot carry is pushed onto `dropped` by name (x-relay-dropped).
   */
  decodeResponse(shape: ShapeId, body: unknown, route: Route, request: CanonicalRequest, dropped?: string[]): CanonicalResponse;
  /** As decodeResponse, frame by frame: names are pushed onto `dropped` as the frames come. */
  streamDecoder(shape: ShapeId, route: Route, request: CanonicalRequest, dropped?: string[]): StreamDecoder;
  /** An upstream error body (any status >= 400) -> the canonical error. */
  decodeError(shape: ShapeId, status: number, body: string): RelayErrorBody;
  /** Usage from a non-streamed response body (passthrough tap). */
  usageFromBody(shape: ShapeId, body: unknown): Usage | null;
  streamInspector(shape: ShapeId): StreamInspector;
  /**
   * Passthrough, optional: a change to the client's request that makes the upstream report
   * usage the client did not ask for (e.g. stream_options.include_usage on Chat Completions),
   * and which of the upstream's frames to hide so the client gets what it asked for. Null when
   * the request already yields usage. Called for every streamed passthrough request: read what
   * you need with `request.member()` (`stream_options` is read without parsing the body);
   * `request.json()` parses the whole body.
   */
  usageRequest?(shape: ShapeId, request: Pick<InferenceCall, 'json' | 'member'>): UsageRequest | null;
  /**
   * Optional: the exact input-token count of `req` (a request body in `req.shape`, as it would be
   * sent), from the vendor's count endpoint, or null when it cannot say. `prompt` gives the same
   * request in canonical form (its model the upstream's), for a counter that takes another shape
   * than `req.shape` (OpenAI's counts Responses input, not Chat); it may throw. The kernel asks when
   * its estimate puts a prompt near a model's context window (core/pipeline/exact-count.ts), and
   * when an answer was cut before the upstream reported its usage (core/pipeline/unreported-usage.ts).
   */
  countTokens?(req: UpstreamRequest, prompt?: () => CanonicalRequest): Promise<number | null>;
}

export interface UsageRequest {
  /**
   * Top-level members to set in the client's body (added, or in place of the client's): the rest
   * of the client's bytes go upstream as they came.
   */
  set: Record<string, unknown>;
  /**
   * What the client gets of one upstream frame: its data unchanged, changed (what the change added
   * taken out again), or null to hide the frame.
   */
  clientFrame(event: string | undefined, data: string): string | null;
}

// ---------------------------------------------------------------- wire codecs

/** What an encoder knows of the request. */
export interface EncodeContext {
  requestId: string;
  /** The model name the client asked for (responses echo it). */
  model: string;
  request: CanonicalRequest;
  /** The client's original request JSON, for codecs that restore what canonical cannot carry. */
  inbound: unknown;
  /** Relay keeps this answer (a stateful shape's store, see ConversationState). */
  stored?: boolean;
  /** Where an encoder names the answer's parts its shape has no place for (x-relay-dropped). */
  dropped?: string[];
}

/** Renders canonical stream events as SSE text in the codec's shape. */
export interface StreamEncoder {
  contentType: string;
  /** SSE text (zero or more complete frames) for one canonical event. */
  encode(event: StreamEvent): string;
  /** Closing frames after the last event (e.g. `data: [DONE]`). */
  finish(): string;
}

export interface RenderedError {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface InboundCodec {
  shape: ShapeId;
  /** Client request JSON -> canonical. Throws RelayError (400, with field) when invalid. */
  decodeRequest(body: unknown): CanonicalRequest;
  /** Parameters of the request that translation drops: a translated response names them in x-relay-dropped. */
  droppedParameters?(body: unknown): string[];
  encodeResponse(response: CanonicalResponse, ctx: EncodeContext): unknown;
  streamEncoder(ctx: EncodeContext): StreamEncoder;
  /** A Relay or upstream error in this shape's error body. */
  renderError(error: RelayErrorBody): RenderedError;
  /** A stateful shape (OpenAI Responses): what translation resolves before and keeps after. */
  state?: ConversationState;
  /** Upstream state a passed-through answer makes and a later request names by id: whose it is. */
  ownership?: ForwardedOwnership;
  /** A token-counting shape: its answer is a count (usage.input_tokens), not a generation, and nothing is billed. */
  countsTokens?: boolean;
  /**
   * The request to pass through to an upstream of this shape (adapter id `upstream`) when it holds
   * what only another vendor can read (Relay's envelopes around another vendor's reasoning or
   * searches): a copy without it, naming what was taken out in `dropped`; null to send it as it is.
   * `raw` is the request's text or bytes, for a cheap look before `json` parses it.
   */
  passthroughBody?(raw: Buffer | string, json: () => Record<string, unknown>, upstream: string, dropped: string[]): Record<string, unknown> | null;
  /**
   * The speed the request asks for at a premium price (OpenAI's service_tier "priority", Anthropic's
   * speed "fast"), for a policy that limits it (core/pipeline/fast-mode.ts): the top-level member
   * that asks, its value, and its value for the standard speed (undefined: leave it out). Null when
   * the request asks for none.
   */
  fastMode?(request: Pick<InferenceCall, 'member'>): { member: string; value: string; standard: string | undefined } | null;
  /**
   * Refuses (throws a RelayError, a 400 naming the member) what a request asks that Relay cannot
   * serve as asked when it passes through to an upstream of this shape: OpenAI's `background`
   * generates after the answer, where Relay cannot meter it. Read with `member` (from the bytes).
   */
  checkPassthrough?(request: Pick<InferenceCall, 'member'>): void;
}

/** A request whose conversation references (previous_response_id, item_reference) were resolved. */
export interface ExpandedRequest {
  /** The request JSON the codec decodes: references replaced by what they name. */
  json: Record<string, unknown>;
  /** Whether the answer is kept (the client did not send store: false, and the store is on). */
  stored: boolean;
  /** The codec's own bookkeeping (e.g. where the request's own input starts). */
  extra?: unknown;
}

/** Relay keeps a stateful shape's conversations for translated routes (core/responses-state). */
export interface ConversationState {
  /** Resolves the request's references for this principal; throws RelayError (404, 413, 400). */
  expand(json: Record<string, unknown>, principal: Principal): Promise<ExpandedRequest>;
  /**
   * Keeps a translated answer; resolves once it is written (the pipeline waits, briefly, before the
   * answer's last byte). `keepOut`: the host key the answer was signed with, masked out of what is
   * kept as it was out of what the caller got (ResponsesState.save takes it); null for none.
   */
  remember(expanded: ExpandedRequest, response: CanonicalResponse, ctx: EncodeContext, principal: Principal, keepOut: HostKeyMask | null): Promise<void>;
  /**
   * Passthrough of a model that may fail over to another vendor: what Relay keeps of the forwarded
   * request (null: nothing, e.g. it continues a conversation only the upstream knows), and a body
   * to forward instead when it references responses only Relay knows.
   */
  forward?(json: Record<string, unknown>, principal: Principal): Promise<ForwardPlan | null>;
  /** Keeps a forwarded answer (the upstream's own response object), without `keepOut` as remember does; returns at once. */
  rememberForwarded?(plan: ForwardPlan, response: unknown, principal: Principal, keepOut: HostKeyMask | null): void;
}

/**
 * What a passed-through answer makes upstream, under the host's shared key, that a later request
 * names by id (OpenAI's responses, items and containers; Anthropic's containers and files): Relay
 * records the ids as the caller's and refuses another owner's (core/pipeline/forwarded-capture.ts).
 */
export interface ForwardedOwnership {
  /**
   * Refuses (a 404 RelayError in the shape's words; nothing is forwarded) a request naming an id
   * recorded as another owner's. Null at once when it names none: such a request costs no query.
   */
  check(request: Pick<InferenceCall, 'member' | 'memberBytes' | 'mayHold' | 'mayHoldReasoningById' | 'body'>, principal: Principal): Promise<void> | null;
  /** What of this request's answer is recorded (store: false keeps less), or null: nothing (the store is off). */
  reader(request: Pick<InferenceCall, 'member'>): ForwardedIdReader | null;
  /** Records the ids as the principal's; returns at once (written in the background). */
  claim(ids: string[], principal: Principal): void;
}

/** The ids a passed-through answer names, read as it goes to the client. */
export interface ForwardedIdReader {
  /** Adds the ids one frame of a streamed answer names (as the stream tap parsed it) to `ids`. */
  frameIds(event: string | undefined, data: string, ids: Set<string>): void;
  /** Adds the ids a whole answer names to `ids`; `parsed` is its JSON, parsed once for every reader. */
  answerIds(body: Buffer, parsed: () => unknown, ids: Set<string>): void;
}

export interface ForwardPlan {
  expanded: ExpandedRequest;
  /** The request with Relay's references resolved, to forward instead of the client's bytes. */
  substitute: Record<string, unknown> | null;
  /** The largest answer worth keeping (the store's own cap): a larger one is not copied while it streams. */
  maxAnswerBytes: number;
}

// ---------------------------------------------------------------- record

export interface UsageEvent {
  request_id: string;
  started_at: string;
  finished_at: string;
  relay_key_id: string | null;
  relay_key_prefix: string | null;
  policy_id: string | null;
  model_requested: string | null;
  model_id: string | null;
  model_slug: string | null;
  host_id: string | null;
  host_key_id: string | null;
  provider_id: string | null;
  upstream_model: string | null;
  inbound_shape: ShapeId;
  upstream_shape: ShapeId | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost: number | null;
  currency: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  attempts: number;
  /** The client ended the request before the response finished. */
  client_aborted: boolean;
  client: string | null;
  extras: Record<string, string>;
  /** The client's own x-request-id, when it sent a safe one (request_id is Relay's, always unique). */
  client_request_id?: string | null;
  /** The upstream's id for its answer (x-request-id or request-id), to quote in a vendor support ticket. */
  upstream_request_id?: string | null;
}

export interface CapturedPayload {
  request_id: string;
  request_body: string;
  response_body: string;
  request_truncated: boolean;
  response_truncated: boolean;
  /** Request headers, with every credential removed. */
  request_headers: Record<string, string>;
  response_headers: Record<string, string>;
  captured_at: string;
}

/** A detached observer of every finished request. Never delays or fails a response. */
export type Recorder = (event: UsageEvent, payload: CapturedPayload | null) => void;

// ---------------------------------------------------------------- trace

/**
 * Follows each inference request as it runs (the otel plugin's tracer): told of the request, of
 * each upstream call and of the first byte, and given the usage event at the end; never the
 * prompt or the completion. None registered: the pipeline pays one null check per step.
 * Its methods must not throw (the kernel guards `startRequest` and `end`, not the per-call ones).
 */
export interface RequestTracer {
  /** An inference request begins (authenticated or not yet); null leaves it untraced. */
  startRequest(request: InboundRequest, model: string, stream: boolean): RequestTrace | null;
}

export interface RequestTrace {
  /** One upstream call begins; its `headers` (e.g. a W3C traceparent) are added to that call. */
  startAttempt(route: Route, upstreamShape: ShapeId): AttemptTrace;
  /** The first byte reached the client. */
  firstByte(): void;
  /** The request finished: its usage event (ids, counts, status; never content). */
  end(event: UsageEvent): void;
}

export interface AttemptTrace {
  /**
   * Headers to send upstream with this call, or null. A traced call carries no `traceparent`,
   * `tracestate` or `baggage` of the client's: only those set here.
   */
  readonly headers: Record<string, string> | null;
  /** The upstream answered with `status` (its own request id, when it sent one). */
  response(status: number, upstreamRequestId: string | null): void;
  /**
   * The call is over. `failover`: why the next candidate is tried instead (a failover reason),
   * null when this call answered the client or was the last; `error`: the code of what it threw.
   */
  end(failover: string | null, error?: string): void;
}
