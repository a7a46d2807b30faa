// One inference request's state across its failover attempts: the client writer, the
// cancellation, health reporting, and what to do when the upstream fails at each stage.
import type { Logger } from 'pino';
import { RelayError } from '../errors.ts';
import type { InboundHttpRequest, Principal, Route, UpstreamBody, UpstreamRequest, UpstreamResponse } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';
import type { ClientWriter } from './client-writer.ts';
import { classifyNetworkError } from './failure.ts';
import type { FailureKind, KeyHealth } from './key-health.ts';
import type { RequestRecord } from './request-record.ts';
import { holdOpening, type HoldResult } from './hold.ts';
import type { Cancellation } from '../http/cancellation.ts';
import { attachBody, BodyBytes } from '../http/body-bytes.ts';

/** What the pipeline gives for an UpstreamRequest; a body as BodyBytes is sent as its parts. */
export type UpstreamRequestFields = Omit<UpstreamRequest, 'signal' | 'onAbort' | 'body'> & { body: Buffer | string | BodyBytes };

export interface HeldStream extends HoldResult {
  kind: 'held';
  iterator: AsyncIterator<Buffer>;
  pending: Promise<IteratorResult<Buffer>> | null;
}

export interface AttemptResult {
  kind: 'done' | 'retry';
}

export interface HoldBounds {
  maxMs: number;
  maxBytes: number;
}

export class Attempt {
  /** True while trying the last candidate: its failures go to the client. */
  isLast = false;

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
    private readonly log: Logger,
  ) {}

  /** What an adapter is asked to send: `fields` plus this request's cancellation; a body given as BodyBytes goes upstream as its parts (attachBody). */
  upstreamRequest(fields: UpstreamRequestFields): UpstreamRequest {
    return new AttemptUpstreamRequest(fields, this.cancellation);
  }

  /** Sends upstream. A network failure returns null (try the next) or, on the last candidate, throws. */
  async send(route: Route, req: UpstreamRequest): Promise<UpstreamResponse | null> {
    this.record.attempts++;
    this.record.route = route;
    this.record.upstreamShape = req.shape;
    try {
      return await route.adapter.send(req);
    } catch (err) {
      if (this.cancellation.aborted) throw new ClientGone();
      const result = this.networkFailure(route, err);
      if (result.kind === 'retry') return null;
      throw new Error('unreachable');
    }
  }

  /** A failure before any byte reached the client. */
  networkFailure(route: Route, err: unknown): AttemptResult {
    if (this.cancellation.aborted) throw new ClientGone();
    const { failure, message } = classifyNetworkError(err);
    if (route.hostKey) this.health.reportFailure(route.hostKey, failure, null, message);
    this.log.warn({ host: route.host.metadata.slug, err: message }, 'upstream attempt failed');
    if (!this.isLast) return { kind: 'retry' };
    throw new RelayError(failure === 'timeout' ? 'RELAY_ERR_UPSTREAM_TIMEOUT' : 'RELAY_ERR_UPSTREAM_UNREACHABLE', `${message}.`);
  }

  /**
   * Holds a stream's opening frames (DESIGN.md "the first byte"). An error before any byte
   * reached the client fails over (unless this is the last candidate, whose error is recorded
   * and passed on); otherwise the key is healthy and the held bytes are the caller's to send.
   */
  async holdStream(route: Route, body: UpstreamBody, inspect: (chunk: Buffer) => 'opening' | 'output' | 'error'): Promise<HeldStream | AttemptResult> {
    const iterator = body[Symbol.asyncIterator]();
    // The body's first bytes most often came in the same socket read as its headers: read and
    // inspected without a promise, they usually decide the hold at once (holdOpening's await and
    // Promise.race cost more than the read itself: bench:compare against ded976b, +8.2% on the
    // chat stream and +5.9% on the messages stream at 16 connections).
    let hold;
    try {
      const queued = body.readNow?.() ?? null;
      const seen = queued === null ? 'opening' : inspect(queued);
      hold = seen === 'opening'
        ? await holdOpening(iterator, { maxMs: this.holdBounds.maxMs, maxBytes: this.holdBounds.maxBytes, inspect }, queued)
        : { verdict: seen, held: [queued!], pending: null };
    } catch (err) {
      return this.networkFailure(route, err);
    }
    if (hold.verdict === 'error' && !this.isLast) {
      this.reportStatus(route, 200, 'server', null);
      body.destroy();
      return { kind: 'retry' };
    }
    if (hold.verdict === 'error') this.record.errorCode = 'upstream_stream_error';
    else this.reportSuccess(route);
    return { kind: 'held', iterator, ...hold };
  }

  reportStatus(route: Route, status: number, failure: FailureKind | null, retryAfterMs: number | null): void {
    if (!route.hostKey || !failure) return;
    this.health.reportFailure(route.hostKey, failure, retryAfterMs, `upstream answered ${status}`);
  }

  /** The upstream sent an SSE frame past the parser's bound; the parser dropped it. */
  noteOversizedFrame(route: Route, limit: number, consequence: string): void {
    this.log.warn({ host: route.host.metadata.slug, limitBytes: limit }, `upstream sent an SSE frame over ${limit} bytes; ${consequence}`);
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
      this.record.errorCode = 'upstream_stream_error';
      this.log.warn({ err: (err as Error)?.message }, 'upstream failed mid-response; cutting the client stream');
    }
    this.writer.cut();
  }
}

/**
 * An UpstreamRequest whose AbortSignal is made only for an adapter that reads it. A class with
 * the getter on its prototype: the object literal with a getter, spread from the fields, that it
 * replaces took ~3 us to create, this ~0.06 us (microbenchmark, Node 20).
 */
class AttemptUpstreamRequest implements UpstreamRequest {
  readonly route: Route;
  readonly shape: UpstreamRequest['shape'];
  body!: Buffer | string;
  readonly headers: Record<string, string>;
  readonly credential: string | null;
  readonly search: string | undefined;
  readonly stream: boolean;
  /** An own property, not a method: adapters pass it on detached (`options.onAbort = req.onAbort`). */
  readonly onAbort: (fn: () => void) => () => void;

  constructor(fields: UpstreamRequestFields, private readonly cancellation: Cancellation) {
    this.route = fields.route;
    this.shape = fields.shape;
    if (fields.body instanceof BodyBytes) attachBody(this, fields.body);
    else this.body = fields.body;
    this.headers = fields.headers;
    this.credential = fields.credential;
    this.search = fields.search;
    this.stream = fields.stream;
    this.onAbort = (fn) => cancellation.onAbort(fn);
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }
}

/** Thrown when the client disconnected; nothing more is sent. */
export class ClientGone extends Error {
  constructor() {
    super('client disconnected');
  }
}
