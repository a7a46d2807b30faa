// Holding a stream's opening frames back (DESIGN.md "Failover and the first byte"): read the
// upstream until a chunk carries output, an in-stream error or a content-filter stop shows up, or
// the bound in time or bytes is reached. Until then nothing has reached the client, so an error can
// still fail over (and a content-filter stop move to a fallback model).
import type { StreamSeen } from '../hooks.ts';

export type HoldVerdict = 'output' | 'error' | 'content_filter' | 'ended' | 'bound';

export interface HoldResult {
  verdict: HoldVerdict;
  /** Chunks read so far, in order, not yet sent. */
  held: Buffer[];
}

export interface HoldOptions {
  maxMs: number;
  maxBytes: number;
  /** Feeds a chunk to the caller's frame reader; returns what the frames so far showed. */
  inspect(chunk: Buffer): StreamSeen;
}

const NOT_YET: Promise<'not-yet'> = Promise.resolve('not-yet');

/**
 * Reads from `iterator` under the hold rules. The iterator stays usable afterwards: a read
 * that was still pending when the time bound hit is returned as `pending`.
 */
export async function holdOpening(
  iterator: AsyncIterator<Buffer>,
  options: HoldOptions,
  opening: Buffer | null = null,
): Promise<HoldResult & { pending: Promise<IteratorResult<Buffer>> | null }> {
  const deadline = Date.now() + options.maxMs;
  // `opening`: a chunk the caller already read and inspected, which showed no output yet.
  const held: Buffer[] = opening ? [opening] : [];
  let bytes = opening ? opening.length : 0;
  if (bytes >= options.maxBytes) return { verdict: 'bound', held, pending: null };
  // The timer is started only when a read has to wait: the body often came with the headers.
  let timer: NodeJS.Timeout | undefined;
  let timeout: Promise<'timeout'> | undefined;
  try {
    for (;;) {
      const next = iterator.next();
      // An already settled read wins this race; a pending one loses to NOT_YET.
      let step: IteratorResult<Buffer> | 'not-yet' | 'timeout' = await Promise.race([next, NOT_YET]);
      if (step === 'not-yet') {
        timeout ??= new Promise<'timeout'>((resolve) => { timer = setTimeout(resolve, Math.max(deadline - Date.now(), 0), 'timeout'); });
        step = await Promise.race([next, timeout]);
      }
      if (step === 'timeout') return { verdict: 'bound', held, pending: next };
      if (step.done) return { verdict: 'ended', held, pending: null };
      const chunk = step.value;
      held.push(chunk);
      bytes += chunk.length;
      const seen = options.inspect(chunk);
      if (seen === 'error') return { verdict: 'error', held, pending: null };
      if (seen === 'output') return { verdict: 'output', held, pending: null };
      if (seen === 'content_filter') return { verdict: 'content_filter', held, pending: null };
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
  if (!pending) return new StartedIterable(iterator);
  return resumeAfter(iterator, pending);
}

/** An iterator already started, as an AsyncIterable. */
class StartedIterable implements AsyncIterable<Buffer> {
  constructor(private readonly iterator: AsyncIterator<Buffer>) {}

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return this.iterator;
  }
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
