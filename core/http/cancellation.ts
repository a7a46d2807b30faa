// A request's cancellation (the client went away) without an AbortSignal per request: the signal
// is made only when something reads it. An AbortSignal is an EventTarget, and making one with its
// listener for every request cost ~10% of a passthrough chat request's throughput (test/bench/RESULTS.md).
import type { UpstreamRequest } from '../hooks.ts';
import type { UpstreamClient } from './upstream-client.ts';

type AbortListener = (reason: unknown) => void;

export class Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] | null = null;
  private controller: AbortController | null = null;

  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  /** An AbortSignal that follows this cancellation, made on first read. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Listeners still waiting for an abort. */
  get listenerCount(): number {
    return this.listeners?.length ?? 0;
  }

  /** Calls `listener` once, when aborted (at once if already); returns what stops listening. */
  onAbort(listener: AbortListener): () => void {
    if (this.aborted) {
      listener(this.reason);
      return noop;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }
}

function noop(): void {}

const SOURCE = Symbol('relay.cancellation');

interface CancellationSource {
  request: UpstreamRequest;
  cancellation: Cancellation;
}

/**
 * `fields` with `headers` and `client` as an UpstreamRequest whose `signal` is the cancellation's,
 * made only if an adapter reads it. A copy (`{ ...req }`) reads it and so carries its own signal.
 */
export function withCancellation(
  fields: Omit<UpstreamRequest, 'signal' | 'client'>, headers: Record<string, string>, client: UpstreamClient, cancellation: Cancellation,
): UpstreamRequest {
  const request: UpstreamRequest & { [SOURCE]?: CancellationSource } = {
    route: fields.route,
    shape: fields.shape,
    body: fields.body,
    headers,
    credential: fields.credential,
    search: fields.search,
    stream: fields.stream,
    client,
    get signal() {
      return cancellation.signal;
    },
  };
  request[SOURCE] = { request, cancellation };
  return request;
}

/** The cancellation behind `req` when it is the very request withCancellation made (a copy may carry another signal). */
export function cancellationOf(req: UpstreamRequest): Cancellation | null {
  const source = (req as { [SOURCE]?: CancellationSource })[SOURCE];
  return source !== undefined && source.request === req ? source.cancellation : null;
}
