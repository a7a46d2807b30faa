// A batch queue's one write call in flight, and the deadline of each attempt at it. An attempt
// that gets no answer within the deadline fails (the queue retries it with backoff) and aborts its
// call's signal: a backend that honours it ends the call at once (a socket closed, a request
// destroyed), and the retry sends the batch again; one that does not has its call run on, and the
// next attempt waits for that call, sending the batch again only once it failed. So batches stay
// written one at a time and in order, a backend that hangs holds one call (one connection, or one
// libuv thread for a file) per queue rather than one per retry, and a call that answers late is
// read once.
import type { BatchWriteOptions } from './batch-queue.ts';

/** What one attempt failed with when no answer came within its deadline (and its call's abort reason). */
export class WriteTimedOut extends Error {
  constructor(readonly timeoutMs: number, waitingForEarlier: boolean) {
    super(waitingForEarlier
      ? `an earlier write (of a batch given up) did not settle within ${timeoutMs} ms`
      : `the write did not settle within ${timeoutMs} ms`);
    this.name = 'WriteTimedOut';
  }
}

/** The abort reason of a call still running when its queue closed (past close()'s deadline, or a batch already given up). */
export class WriteAbandoned extends Error {
  constructor() {
    super('the log queue closed with this write still running');
    this.name = 'WriteAbandoned';
  }
}

type Outcome<R> = { ok: true; result: R; durationMs: number } | { ok: false; error: unknown };

interface Call<T, R> {
  batch: T[];
  outcome: Promise<Outcome<R>>;
  settled: Outcome<R> | null;
  controller: AbortController;
}

const TIMED_OUT = Symbol('timed out');

export class WriteSlot<T, R> {
  private call: Call<T, R> | null = null;

  constructor(private readonly write: (batch: T[], options: BatchWriteOptions) => Promise<R>, private readonly timeoutMs: number) {}

  /** One attempt at `batch`: its result and the call's duration; throws the write's error, or WriteTimedOut. */
  async attempt(batch: T[]): Promise<{ result: R; durationMs: number }> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs, TIMED_OUT);
      // A hung write must not keep the process alive on its own.
      timer.unref();
    });
    try {
      const earlier = this.call;
      if (earlier && earlier.batch !== batch && !earlier.settled) {
        // A batch given up while its call still ran (aborted then): that call ends first.
        if ((await Promise.race([earlier.outcome, deadline])) === TIMED_OUT) throw this.timedOut(earlier, true);
      }
      // A failure that came after its attempt timed out was counted then: this attempt sends anew.
      if (!this.call || this.call.batch !== batch || this.call.settled?.ok === false) this.call = this.start(batch);
      const outcome = await Promise.race([this.call.outcome, deadline]);
      if (outcome === TIMED_OUT) throw this.timedOut(this.call, false);
      this.call = null;
      if (!outcome.ok) throw outcome.error;
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Aborts the call still running, if any (the queue closed): nothing will wait for it any more. */
  abort(): void {
    if (this.call && !this.call.settled) this.call.controller.abort(new WriteAbandoned());
  }

  /** The attempt's error; the call is told through its signal that it is given up, and may end now. */
  private timedOut(call: Call<T, R>, waitingForEarlier: boolean): WriteTimedOut {
    const error = new WriteTimedOut(this.timeoutMs, waitingForEarlier);
    call.controller.abort(error);
    return error;
  }

  private start(batch: T[]): Call<T, R> {
    const started = performance.now();
    const controller = new AbortController();
    let pending: Promise<R>;
    try {
      pending = this.write(batch, { signal: controller.signal });
    } catch (error) {
      pending = Promise.reject(error);
    }
    const call: Call<T, R> = { batch, settled: null, outcome: null as never, controller };
    // Never rejects: a call abandoned by its attempt settles without an unhandled rejection.
    call.outcome = Promise.resolve(pending).then(
      (result): Outcome<R> => ({ ok: true, result, durationMs: performance.now() - started }),
      (error: unknown): Outcome<R> => ({ ok: false, error }),
    ).then((outcome) => (call.settled = outcome));
    return call;
  }
}
