// One inference request's cancellation (the client went away): a flag and plain callbacks, with
// an AbortSignal made only when something asks for one. An AbortController per request, with its
// EventTarget and listener map, was ~6% of a request's allocations (heap sampling); the kernel's
// own upstream calls subscribe with onAbort() and never need it.

const NOOP = () => {};

export class Cancellation {
  aborted = false;
  private controller: AbortController | null = null;
  private callbacks: Array<() => void> | null = null;

  /** An AbortSignal that follows this cancellation (made on first use). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.controller?.abort();
    const callbacks = this.callbacks;
    this.callbacks = null;
    if (callbacks) for (const fn of callbacks) fn();
  }

  /** Calls `fn` once on abort (at once if already aborted); returns the unsubscribe. */
  onAbort(fn: () => void): () => void {
    if (this.aborted) {
      fn();
      return NOOP;
    }
    const callbacks = (this.callbacks ??= []);
    callbacks.push(fn);
    return () => {
      const i = callbacks.indexOf(fn);
      if (i >= 0) callbacks.splice(i, 1);
    };
  }
}
