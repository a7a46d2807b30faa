// One inference request's state across its failover attempts: the client writer, the
// cancellation, health reporting, and what to do when the upstream fails at each stage.
import { RelayError, type UpstreamErrorReason } from '../errors.ts';
import type { FallbackCondition } from '../catalog/kinds.ts';
import type { AttemptTrace, InboundHttpRequest, Principal, RequestTrace, Route, StreamSeen, UpstreamBody, UpstreamRequest, UpstreamResponse } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';
import type { ClientWriter } from './client-writer.ts';
import { classifyNetworkError } from './failure.ts';
import type { FailureKind, KeyHealth } from './key-health.ts';
import type { RequestRecord } from './request-record.ts';
import { holdOpening, type HoldResult } from './hold.ts';
import type { UpstreamClient } from '../http/upstream-client.ts';
import type { RequestLog } from './request-log.ts';
import { upstreamIdOf } from './upstream-id.ts';
import { TRACE_CONTEXT_HEADERS } from '../http/headers.ts';
import { NO_RETRY_POLICY, type RetryRun } from './retry-policy.ts';
import { bindingKey, type BindingMeter } from './binding-meter.ts';
import type { LastUsed } from './last-used.ts';
import { isMeasured } from './balancing.ts';
import { sendHedged, type HedgePlan } from './hedge.ts';
import type { StandardSpeed } from './fast-mode.ts';
import { withCancellation, type Cancellation } from '../http/cancellation.ts';


/** What the pipeline gives for an UpstreamRequest; the attempt adds the cancellation and the client. */
export type UpstreamRequestFields = Omit<UpstreamRequest, 'signal' | 'client'>;

export interface HeldStream extends HoldResult {
  kind: 'held';
  iterator: AsyncIterator<Buffer>;
  pending: Promise<IteratorResult<Buffer>> | null;
}

export interface AttemptResult {
  /** next_model: the upstream refused the request for a reason a fallback takes (fallbackReason). */
  kind: 'done' | 'retry' | 'next_model';
}

export interface HoldBounds {
  maxMs: number;
  maxBytes: number;
}

export class Attempt {
  /** True while trying the last candidate: its failures go to the client. */
  isLast = false;
  /** The last failure before the first byte, for the fallback condition (fallbacks.ts). */
  lastFailure: FailureKind | null = null;
  /** The model answering when it is a fallback: the name a translated response carries. */
  servedModel: string | null = null;
  /** Why the upstream refused the request when a later fallback takes it (context window, content filter). */
  fallbackReason: UpstreamErrorReason | null = null;
  /** The request's retry policy at work (retry-policy.ts); none unless the pipeline sets one. */
  retry: RetryRun = NO_RETRY_POLICY;
  /** The last failure's retry-after, for a same-binding retry and a 429 answered by Relay. */
  lastRetryAfterMs: number | null = null;
  /** The last failed attempt's upstream status (null for a network failure). */
  lastStatus: number | null = null;
  /** The cancellation joined with the retry policy's deadline, when the policy has one. */
  private deadlineSignal: AbortSignal | null = null;
  /** Measures bindings of models balanced by what is measured (binding-meter.ts); null in tests without one. */
  meter: BindingMeter | null = null;
  /** Notes each host key a request is built for, as it is sent (last-used.ts); null in tests without one. */
  hostKeyUse: LastUsed | null = null;
  /** Ends the current binding's in-flight count (at the next attempt, or the request's end). */
  private endInFlight: (() => void) | null = null;
  /** A hedge for the next send (hedge.ts), set by the pipeline when the model asks for one. */
  hedge: HedgePlan | null = null;
  /** The route whose answer send() returned (another than asked when a hedge won). */
  sentRoute: Route | null = null;
  /**
   * Makes again what was sent to sentRoute, for counting its prompt when the answer is cut
   * (unreported-usage.ts), without holding its body for the answer's length; null when a hedge won.
   */
  resend: (() => UpstreamRequest) | null = null;
  /** The credential of the hedge's route, when the hedge won. */
  hedgeCredential: string | null = null;
  /** The members a passed-through body gets for the standard speed, when the policy limits fast modes (fast-mode.ts). */
  standardSpeed: StandardSpeed | null = null;
  /** Whether a later fallback of this request takes `condition` (set per model by the pipeline). */
  fallbackTakes: (condition: FallbackCondition) => boolean = () => false;

  constructor(
    readonly call: InferenceCall,
    readonly request: InboundHttpRequest,
    readonly principal: Principal,
    readonly record: RequestRecord,
    readonly writer: ClientWriter,
    /** Aborts when the client goes away. */
    readonly cancellation: Cancellation,
    readonly holdBounds: HoldBounds,
    private readonly health: KeyHealth,
    private readonly log: RequestLog,
    private readonly client: UpstreamClient,
    /** The request's trace when a tracer follows it (hooks.ts RequestTracer), else null. */
    private readonly trace: RequestTrace | null = null,
  ) {}

  /** The open upstream call's trace, ended by endAttempt. */
  private span: AttemptTrace | null = null;

  /** An upstream call's trace, its headers added to the call; null when the request is not traced. */
  private startSpan(route: Route, req: UpstreamRequest): AttemptTrace | null {
    if (!this.trace) return null;
    const span = this.trace.startAttempt(route, req.shape);
    if (span.headers) Object.assign(req.headers, span.headers);
    return span;
  }

  /** Ends the upstream call's trace: `failover` names why the next candidate is tried, if one is. */
  endAttempt(failover: string | null, error?: string): void {
    this.span?.end(failover, error);
    this.span = null;
  }

  /** What an adapter is asked to send: `fields` plus this request's cancellation and the instance's client. */
  upstreamRequest(fields: UpstreamRequestFields): UpstreamRequest {
    if (fields.route.hostKey) this.hostKeyUse?.note(fields.route.hostKey.metadata.id);
    // The upstream sees the client's id when it sent one, else Relay's: either finds this request in Relay's log.
    const headers = Object.assign({}, fields.headers, { 'x-request-id': this.record.clientRequestId ?? this.request.id });
    // A traced call's trace context is the tracer's alone (its span's headers): the client's may lie.
    if (this.trace) for (const name of TRACE_CONTEXT_HEADERS) delete headers[name];
    // The retry policy's deadline cancels an upstream attempt too (never once bytes reached the client).
    const deadline = this.retry.deadlineSignal;
    if (!deadline) return withCancellation(fields, headers, this.client, this.cancellation);
    this.deadlineSignal ??= AbortSignal.any([this.cancellation.signal, deadline]);
    return Object.assign({}, fields, { headers, signal: this.deadlineSignal, client: this.client });
  }

  /** An upstream refusal with a reason: true (and noted) when a later fallback takes it. */
  movesOn(reason: UpstreamErrorReason | undefined): boolean {
    if (reason === undefined || !this.fallbackTakes(reason)) return false;
    this.fallbackReason = reason;
    this.record.errorCode = null;
    return true;
  }

  /** The request (or this attempt of it) is over: its binding has one request fewer in flight. */
  finishInFlight(): void {
    this.endInFlight?.();
    this.endInFlight = null;
  }

  get clientGone(): boolean {
    return this.cancellation.aborted;
  }

  /** Sends upstream. A network failure returns null (try the next) or, on the last candidate, throws. */
  async send(route: Route, req: UpstreamRequest, rebuild?: (route: Route, credential: string | null) => UpstreamRequest): Promise<UpstreamResponse | null> {
    this.sentRoute = route;
    this.resend = rebuild ? () => rebuild(route, req.credential) : () => req;
    const plan = this.hedge;
    this.hedge = null;
    if (plan && rebuild) return this.sendWithHedge(route, req, plan, rebuild);
    this.record.attempts++;
    this.record.route = route;
    this.record.upstreamShape = req.shape;
    this.finishInFlight();
    // Measured for a strategy that orders by it, and for a hedge's delay (the binding's recent p95).
    const measured = this.meter !== null && (isMeasured(route.model.spec.balancing) || route.model.spec.hedge !== undefined) ? bindingKey(route) : null;
    if (measured) this.endInFlight = this.meter!.acquire(measured);
    const started = measured ? performance.now() : 0;
    this.span = this.startSpan(route, req);
    try {
      const res = await route.adapter.send(req);
      this.record.upstreamRequestId = upstreamIdOf(route, req.credential, this.principal, res);
      this.span?.response(res.status, this.record.upstreamRequestId);
      // An error answer's speed says nothing of the binding's (health and failover deal with it).
      if (measured && res.status < 400) this.meter!.observe(measured, performance.now() - started);
      return res;
    } catch (err) {
      this.finishInFlight();
      if (this.cancellation.aborted) throw new ClientGone();
      const result = this.networkFailure(route, err);
      if (result.kind === 'retry') return null;
      throw new Error('unreachable');
    }
  }

  private async sendWithHedge(route: Route, req: UpstreamRequest, plan: HedgePlan, rebuild: (route: Route, credential: string | null) => UpstreamRequest): Promise<UpstreamResponse | null> {
    this.record.attempts++;
    this.record.route = route;
    this.record.upstreamShape = req.shape;
    const started = performance.now();
    let hedgedAt: number | null = null;
    // Each request sent is an upstream call of its own in the trace, with its own traceparent.
    const primarySpan = this.startSpan(route, req);
    // Typed by a cast: set inside build(), which the compiler's narrowing does not follow.
    let hedgeSpan = null as AttemptTrace | null;
    this.span = primarySpan;
    try {
      const result = await sendHedged(route, req, plan, (p) => {
        const hedgeReq = rebuild(p.route, p.credential);
        hedgeSpan = this.startSpan(p.route, hedgeReq);
        return hedgeReq;
      }, () => {
        hedgedAt = performance.now() - started;
        this.record.attempts++;
      });
      const [kept, lost] = result.route === route ? [primarySpan, hedgeSpan] : [hedgeSpan, primarySpan];
      lost?.end(null, 'hedge_lost');
      this.span = kept;
      this.sentRoute = result.route;
      if (result.route !== route) this.resend = null;
      this.hedgeCredential = plan.credential;
      this.record.route = result.route;
      this.record.upstreamRequestId = upstreamIdOf(result.route, result.route === route ? req.credential : plan.credential, this.principal, result.res);
      this.span?.response(result.res.status, this.record.upstreamRequestId);
      // Only the kept answer is timed: a cancelled one's time is unknown (longer than it was given).
      if (this.meter && result.res.status < 400) this.meter.observe(bindingKey(result.route), result.ttfbMs);
      if (result.cancelled) {
        // The cancelled request's tokens are not known: it was cut before its answer.
        this.record.extras.relay_hedge = JSON.stringify({
          afterMs: plan.afterMs, delayFrom: plan.from, sentAtMs: Math.round(hedgedAt ?? 0), kept: result.route.host.metadata.slug, cancelled: result.cancelled.host.metadata.slug,
        });
      }
      return result.res;
    } catch (err) {
      // The primary's failure is the one reported; its span is ended with the attempt.
      hedgeSpan?.end(null, this.cancellation.aborted ? 'client_gone' : 'upstream_unreachable');
      if (this.cancellation.aborted) throw new ClientGone();
      const r = this.networkFailure(route, err);
      if (r.kind === 'retry') return null;
      throw new Error('unreachable');
    }
  }

  /** A failure before any byte reached the client. */
  networkFailure(route: Route, err: unknown): AttemptResult {
    if (this.cancellation.aborted) throw new ClientGone();
    this.retry.checkDeadline();
    const { failure, message, badResponse } = classifyNetworkError(err);
    this.lastFailure = failure;
    this.lastRetryAfterMs = null;
    this.lastStatus = null;
    this.record.lastFailure = failure;
    if (route.hostKey) this.health.reportFailure(route.hostKey, failure, null, message);
    this.log.warn({ host: route.host.metadata.slug, err: message }, 'upstream attempt failed');
    if (!this.isLast) return { kind: 'retry' };
    const code = failure === 'timeout' ? 'RELAY_ERR_UPSTREAM_TIMEOUT' : badResponse ? 'RELAY_ERR_UPSTREAM_BAD_RESPONSE' : 'RELAY_ERR_UPSTREAM_UNREACHABLE';
    throw new RelayError(code, `${message}.`);
  }

  /**
   * Holds a stream's opening frames (DESIGN.md "the first byte"). An error before any byte
   * reached the client fails over (unless this is the last candidate, whose error is recorded
   * and passed on); a content-filter stop before any output moves to the next model when a later
   * fallback takes content_filter; otherwise the key is healthy and the held bytes are the caller's to send.
   */
  async holdStream(route: Route, body: UpstreamBody, inspect: (chunk: Buffer) => StreamSeen, errorStatus?: () => number | null): Promise<HeldStream | AttemptResult> {
    const iterator = body[Symbol.asyncIterator]();
    let hold;
    try {
      hold = await holdOpening(iterator, { maxMs: this.holdBounds.maxMs, maxBytes: this.holdBounds.maxBytes, inspect });
    } catch (err) {
      return this.networkFailure(route, err);
    }
    // The upstream answered (its key is healthy) but its filter stopped the answer: another model may take it.
    if (hold.verdict === 'content_filter' && this.movesOn('content_filter')) {
      this.reportSuccess(route);
      body.destroy();
      return { kind: 'next_model' };
    }
    if (hold.verdict === 'error') this.record.lastFailure = 'stream_error';
    if (hold.verdict === 'error' && !this.isLast) {
      // An error event that says it is a rate limit (Bedrock's in-stream throttlingException) cools the key and moves on as a 429 would.
      const failure: FailureKind = errorStatus?.() === 429 ? 'rate_limit' : 'server';
      this.reportStatus(route, failure === 'rate_limit' ? 429 : 200, failure, null);
      this.lastFailure = failure;
      body.destroy();
      return { kind: 'retry' };
    }
    if (hold.verdict === 'error') this.record.errorCode = 'upstream_stream_error';
    else this.reportSuccess(route);
    return { kind: 'held', iterator, ...hold };
  }

  reportStatus(route: Route, status: number, failure: FailureKind | null, retryAfterMs: number | null): void {
    this.lastRetryAfterMs = retryAfterMs;
    this.lastStatus = status;
    if (failure) this.lastFailure = failure;
    if (failure) this.record.lastFailure ??= failure;
    if (!route.hostKey || !failure) return;
    this.health.reportFailure(route.hostKey, failure, retryAfterMs, `upstream answered ${status}`);
  }

  /** The upstream sent an SSE frame past the parser's bound; the parser dropped it. */
  noteOversizedFrame(route: Route, limit: number, consequence: string): void {
    this.log.warn({ host: route.host.metadata.slug, limitBytes: limit }, `upstream sent an SSE frame over ${limit} bytes; ${consequence}`);
  }

  /** A 2xx answer the client got whole whose usage could not be read: the record has none. */
  noteUnreadUsage(route: Route, why: string): void {
    this.log.warn({ host: route.host.metadata.slug }, `usage not read from the upstream's answer: ${why}`);
  }

  reportSuccess(route: Route): void {
    if (route.hostKey) this.health.reportSuccess(route.hostKey);
  }

  /** The upstream failed (or the client left) after bytes reached the client: cut, no failover. */
  failAfterCommit(err: unknown): void {
    if (this.cancellation.aborted) {
      this.record.clientAborted = true;
      this.record.errorCode = 'client_aborted';
    } else {
      this.noteStreamBroken(err, 'cutting the client stream');
    }
    this.writer.cut();
  }

  /** The client's encoder could not write the upstream's answer; the stack says whether Relay is at fault. */
  noteUntranslatable(err: unknown): void {
    this.log.error({ err: (err as Error)?.message, stack: (err as Error)?.stack }, 'the upstream\'s answer could not be encoded in the client\'s shape');
  }

  /** The upstream failed after the answer began; what the client gets instead is `then`. */
  noteStreamBroken(err: unknown, then: string): void {
    this.record.errorCode = 'upstream_stream_error';
    this.log.warn({ err: (err as Error)?.message }, `upstream failed mid-response; ${then}`);
  }
}

/** Thrown when the client disconnected; nothing more is sent. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected');
  }
}
