// A batch queue's one write call in flight, and the deadline of each attempt at it. An attempt
// that gets no answer within the deadline fails (the queue retries it with backoff) while its call
// runs on: the next attempt waits for that call, and sends the batch again only once it failed.
// So batches stay written one at a time and in order, a backend that hangs holds one call (one
// connection, or one libuv thread for a file) per queue rather than one per retry, and a call that
// answers late is read once.

/** What one attempt failed with when no answer came within its deadline. */
export class WriteTimedOut extends Error {
  constructor(readonly timeoutMs: number, waitingForEarlier: boolean) {
    super(waitingForEarlier
      ? `an earlier write (of a batch given up) did not settle within ${timeoutMs} ms`
      : `the write did not settle within ${timeoutMs} ms`);
    this.name = 'WriteTimedOut';
  }
}

type Outcome<R> = { ok: true; result: R; durationMs: number } | { ok: false; error: unknown };

interface Call<T, R> {
  batch: T[];
  outcome: Promise<Outcome<R>>;
  settled: Outcome<R> | null;
}

const TIMED_OUT = Symbol('timed out');

export class WriteSlot<T, R> {
  private call: Call<T, R> | null = null;

  constructor(private readonly write: (batch: T[]) => Promise<R>, private readonly timeoutMs: number) {}

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
        // A batch given up while its call still ran: that call ends first.
        if ((await Promise.race([earlier.outcome, deadline])) === TIMED_OUT) throw new WriteTimedOut(this.timeoutMs, true);
      }
      // A failure that came after its attempt timed out was counted then: this attempt sends anew.
      if (!this.call || this.call.batch !== batch || this.call.settled?.ok === false) this.call = this.start(batch);
      const outcome = await Promise.race([this.call.outcome, deadline]);
      if (outcome === TIMED_OUT) throw new WriteTimedOut(this.timeoutMs, false);
      this.call = null;
      if (!outcome.ok) throw outcome.error;
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  private start(batch: T[]): Call<T, R> {
    const started = performance.now();
    let pending: Promise<R>;
    try {
      pending = this.write(batch);
    } catch (error) {
      pending = Promise.reject(error);
    }
    const call: Call<T, R> = { batch, settled: null, outcome: null as never };
    // Never rejects: a call abandoned by its attempt settles without an unhandled rejection.
    call.outcome = Promise.resolve(pending).then(
      (result): Outcome<R> => ({ ok: true, result, durationMs: performance.now() - started }),
      (error: unknown): Outcome<R> => ({ ok: false, error }),
    ).then((outcome) => (call.settled = outcome));
    return call;
  }
}
