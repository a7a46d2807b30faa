// Holding a stream's opening frames back (DESIGN.md "Failover and the first byte"): read the
// upstream until a chunk carries output, an in-stream error shows up, or the bound in time or
// bytes is reached. Until then nothing has reached the client, so an error can still fail over.

export type HoldVerdict = 'output' | 'error' | 'ended' | 'bound';

export interface HoldResult {
  verdict: HoldVerdict;
  /** Chunks read so far, in order, not yet sent. */
  held: Buffer[];
}

export interface HoldOptions {
  maxMs: number;
  maxBytes: number;
  /** Feeds a chunk to the caller's frame reader; returns what the frames so far showed. */
  inspect(chunk: Buffer): 'opening' | 'output' | 'error';
}

/**
 * Reads from `iterator` under the hold rules. The iterator stays usable afterwards: a read
 * that was still pending when the time bound hit is returned as `pending`.
 */
export async function holdOpening(
  iterator: AsyncIterator<Buffer>,
  options: HoldOptions,
): Promise<HoldResult & { pending: Promise<IteratorResult<Buffer>> | null }> {
  const held: Buffer[] = [];
  let bytes = 0;
  const deadline = Date.now() + options.maxMs;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const next = iterator.next();
      const remaining = deadline - Date.now();
      const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), Math.max(remaining, 0)); });
      const step = await Promise.race([next, timeout]);
      clearTimeout(timer);
      if (step === 'timeout') return { verdict: 'bound', held, pending: next };
      if (step.done) return { verdict: 'ended', held, pending: null };
      const chunk = step.value;
      held.push(chunk);
      bytes += chunk.length;
      const seen = options.inspect(chunk);
      if (seen === 'error') return { verdict: 'error', held, pending: null };
      if (seen === 'output') return { verdict: 'output', held, pending: null };
      if (bytes >= options.maxBytes) return { verdict: 'bound', held, pending: null };
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Continues an iterator after a hold, starting with a read that may still be pending. Without
 * one, the iterator itself is read on (no generator between: one promise less per chunk).
 */
export function resume(iterator: AsyncIterator<Buffer>, pending: Promise<IteratorResult<Buffer>> | null): AsyncIterable<Buffer> {
  if (!pending) return { [Symbol.asyncIterator]: () => iterator };
  return resumeAfter(iterator, pending);
}

async function* resumeAfter(iterator: AsyncIterator<Buffer>, pending: Promise<IteratorResult<Buffer>>): AsyncGenerator<Buffer> {
  const first = await pending;
  if (first.done) return;
  yield first.value;
  for (;;) {
    const step = await iterator.next();
    if (step.done) return;
    yield step.value;
  }
}
