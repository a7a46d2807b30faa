// The deadline of a read of a budget's spend (the usage log's summary, the shared total in
// Valkey): a backend that accepts and never answers must not keep a read "under way" forever,
// which would keep a budget from ever being read again (budget-guard.ts starts a fresh read).

/** A read that did not answer within its deadline; says how long it waited, nothing of the backend. */
export class ReadTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'ReadTimedOut';
  }
}

/** Settles as `read` does, or rejects with ReadTimedOut after `ms`; a late answer or failure of `read` is dropped. */
export function withDeadline<T>(read: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadTimedOut(ms)), ms);
    // A read still waiting must not keep a closing process alive.
    timer.unref();
  });
  return Promise.race([read, expired]).finally(() => clearTimeout(timer));
}
