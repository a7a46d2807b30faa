// A log backend's wait that its write's signal cuts short: for what the call shares with others
// (a table migration, a connection's queued commands) and so may not stop, only stop waiting for.

/** `work`'s outcome, or a rejection with the signal's reason once it aborts first (the work itself runs on). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
