// The one batching queue every log backend shares (after Kong's kong/tools/queue.lua): sinks stay
// small because batching, coalescing, retry with backoff, the bound on held items and the
// accounting of what was lost live here.
//
// Guarantees:
//  - push() never blocks and never throws; beyond `maxQueued` held items it drops the new item
//    and counts it (reason `queue_full`).
//  - A batch is written when it is full (`maxBatchSize`), when its oldest item has waited
//    `maxDelayMs`, or when flush() or settled() asks; under steady load it still waits to fill,
//    rather than each write taking the few items that came during the last one.
//  - Batches are written in order, one at a time. A failing batch stays at the head and is retried
//    with exponential backoff (with jitter); items pushed meanwhile wait behind it, within the bound.
//  - An attempt that gets no answer within `writeTimeoutMs` fails and is retried like any failure,
//    and the signal its write was given is aborted. Its call is not abandoned to a second one: the
//    retry waits for it (one call in flight per queue, see write-slot.ts); a backend that honours
//    the signal ends the call at once (failed), so the retry sends the batch again without delay;
//    a late success counts the batch written once, a late failure has it sent again. A call that
//    answers after its batch was dropped counts nothing more.
//  - Past close()'s deadline, what was held is counted there (`close_deadline`), once, and the
//    signal of a write still running is aborted: a write that lands later counts nothing (so a
//    batch counted lost may in fact be stored).
//  - A batch whose retry budget (`maxAttempts` or `maxRetryMs`) runs out is dropped and counted
//    (`retries_exhausted`); close() drops what it could not write before its deadline (`close_deadline`).
//  - A write that throws an error with `retryable: false` drops its batch at once (`rejected`).
//  - A write that resolves with `{ rejected: n }` wrote its batch but n items of it (rows the
//    store refused for good): those n are counted as dropped (`rejected`), the rest as written.
//  - A queue that yields (`yieldWhile`) drops its batch instead of writing or retrying it (`yielded`).
//  - Every drop reaches onDropped (metrics) and the log, coalesced to one line per `dropLogIntervalMs`.

import { WriteSlot } from './write-slot.ts';

export type DropReason = 'queue_full' | 'retries_exhausted' | 'close_deadline' | 'closed' | 'yielded' | 'rejected';

/** What a write may resolve with: how many items of its batch it left out for good (counted as `rejected`). */
export interface BatchWriteResult {
  rejected?: number;
}

/** What each write call is given. */
export interface BatchWriteOptions {
  /**
   * Aborted when the queue stops waiting for the call: at the write deadline (`writeTimeoutMs`;
   * the reason is a WriteTimedOut) and when close() ends with the call still running (past its
   * deadline, or a batch already given up; a WriteAbandoned). A write that honours it ends its call
   * promptly, rejecting, so the retry need not wait for a hung call; one that ignores it is waited for.
   */
  signal: AbortSignal;
}

export interface BatchQueueLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RetryOptions {
  /** Attempts per batch including the first; unlimited when unset (then maxRetryMs bounds it). */
  maxAttempts?: number;
  /** Time budget for retrying one batch, from its first failure. Default 300 000 (5 min). */
  maxRetryMs?: number;
  /** First backoff. Default 200 ms. */
  initialBackoffMs?: number;
  /** Backoff ceiling. Default 30 000 ms. */
  maxBackoffMs?: number;
}

export interface BatchQueueOptions<T> {
  /** Names the queue in logs and metrics, e.g. `usage:postgres`. */
  name: string;
  /** Resolves when the batch is stored; with `{ rejected }` when some items of it never will be. */
  write: (batch: T[], options: BatchWriteOptions) => Promise<void | BatchWriteResult>;
  /** Items per write. Default 500. */
  maxBatchSize?: number;
  /** Longest an item waits for a batch to fill. Default 1000 ms. */
  maxDelayMs?: number;
  /** Bound on items held (waiting and in flight). Default 20 000. */
  maxQueued?: number;
  retry?: RetryOptions;
  /**
   * Most one write attempt waits for its answer. Default 30 000. Past it the attempt counts as
   * failed and is retried with backoff, and the call's signal is aborted; the call itself is waited
   * for (ended at once by a write that honours the signal) before the batch is sent again.
   */
  writeTimeoutMs?: number;
  onDropped?: (count: number, reason: DropReason) => void;
  /**
   * While this returns true, a batch due to be written or retried is dropped instead (`yielded`):
   * another queue's items come first (payloads give way to usage records on a failing disk).
   */
  yieldWhile?: () => boolean;
  /** After each successful write. */
  onWritten?: (count: number, durationMs: number) => void;
  /** After each failed write that will be retried. */
  onRetry?: (attempt: number, error: unknown) => void;
  log?: BatchQueueLog;
  /** Coalesces drop warnings to one log line per interval. Default 10 000 ms. */
  dropLogIntervalMs?: number;
}

export interface BatchQueueStats {
  /** Items held now (waiting and in flight). */
  queued: number;
  written: number;
  dropped: number;
  droppedByReason: Record<DropReason, number>;
  /** Failed writes that were retried. */
  retries: number;
  /** True while the head batch is failing. */
  backingOff: boolean;
}

export interface BatchQueue<T> {
  readonly name: string;
  /** Enqueues one item; never blocks, never throws. Returns false when it was dropped. */
  push(item: T): boolean;
  /** Writes everything held now; resolves when the queue is empty (written or dropped). */
  flush(): Promise<void>;
  /**
   * Resolves once every item pushed before the call has left the queue (written or dropped),
   * whatever is pushed after it: unlike flush(), steady traffic cannot hold it up.
   */
  settled(): Promise<void>;
  /**
   * Stops accepting items and writes what it can within `deadlineMs` (default 10 000);
   * what is left then is dropped and counted.
   */
  close(deadlineMs?: number): Promise<void>;
  stats(): BatchQueueStats;
}

const DEFAULTS = {
  maxBatchSize: 500,
  maxDelayMs: 1000,
  maxQueued: 20_000,
  maxRetryMs: 300_000,
  initialBackoffMs: 200,
  maxBackoffMs: 30_000,
  writeTimeoutMs: 30_000,
  dropLogIntervalMs: 10_000,
};

const noopLog: BatchQueueLog = { warn() {}, error() {} };

/** The items a write reported left out, as a count within its batch (a backend's odd value counts nothing). */
function rejectedCount(result: void | BatchWriteResult, size: number): number {
  const n = result?.rejected;
  return typeof n === 'number' && Number.isFinite(n) ? Math.min(size, Math.max(0, Math.floor(n))) : 0;
}

export function createBatchQueue<T>(options: BatchQueueOptions<T>): BatchQueue<T> {
  const maxBatchSize = Math.max(1, options.maxBatchSize ?? DEFAULTS.maxBatchSize);
  const maxDelayMs = Math.max(0, options.maxDelayMs ?? DEFAULTS.maxDelayMs);
  const maxQueued = Math.max(maxBatchSize, options.maxQueued ?? DEFAULTS.maxQueued);
  const retry = {
    maxAttempts: options.retry?.maxAttempts ?? Infinity,
    maxRetryMs: options.retry?.maxRetryMs ?? (options.retry?.maxAttempts ? Infinity : DEFAULTS.maxRetryMs),
    initialBackoffMs: options.retry?.initialBackoffMs ?? DEFAULTS.initialBackoffMs,
    maxBackoffMs: options.retry?.maxBackoffMs ?? DEFAULTS.maxBackoffMs,
  };
  const log = options.log ?? noopLog;
  const slot = new WriteSlot<T, void | BatchWriteResult>(options.write, Math.max(1, options.writeTimeoutMs ?? DEFAULTS.writeTimeoutMs));
  const dropLogIntervalMs = options.dropLogIntervalMs ?? DEFAULTS.dropLogIntervalMs;

  // Items in order; the head batch (being written) stays here until it is written or dropped,
  // so the bound counts it.
  let items: T[] = [];
  let draining: Promise<void> | null = null;
  // Items accepted up to this count are written now, not at the batch delay (the delay passed, or a
  // caller waits); later ones wait for their own delay, so a steady trickle still coalesces.
  let flushThrough = 0;
  let delayTimer: NodeJS.Timeout | null = null;
  let closed = false;
  let deadlinePassed = false;
  let wakeBackoff: (() => void) | null = null;
  let backingOff = false;
  // Items accepted so far, and how many of them have left (written or dropped): FIFO, so the
  // item accepted n-th has left once `left` reaches n.
  let accepted = 0;
  let left = 0;
  let waiters: Array<{ mark: number; resolve: () => void }> = [];

  const stats = {
    written: 0,
    retries: 0,
    droppedByReason: { queue_full: 0, retries_exhausted: 0, close_deadline: 0, closed: 0, yielded: 0, rejected: 0 } as Record<DropReason, number>,
  };
  const unreportedDrops: Record<DropReason, number> = { queue_full: 0, retries_exhausted: 0, close_deadline: 0, closed: 0, yielded: 0, rejected: 0 };
  let dropLogTimer: NodeJS.Timeout | null = null;

  function reportDrops(): void {
    dropLogTimer = null;
    const counts = Object.fromEntries(Object.entries(unreportedDrops).filter(([, n]) => n > 0));
    if (Object.keys(counts).length === 0) return;
    for (const reason of Object.keys(unreportedDrops) as DropReason[]) unreportedDrops[reason] = 0;
    log.error({ queue: options.name, dropped: counts, queued: items.length }, `log queue ${options.name} dropped events`);
  }

  function drop(count: number, reason: DropReason): void {
    if (count <= 0) return;
    stats.droppedByReason[reason] += count;
    unreportedDrops[reason] += count;
    try {
      options.onDropped?.(count, reason);
    } catch {
      // A metrics callback must not break the queue.
    }
    // The first loss is reported at once; later ones are coalesced so a flood cannot flood the log.
    if (dropLogTimer === null) {
      reportDrops();
      dropLogTimer = setTimeout(reportDrops, dropLogIntervalMs);
      dropLogTimer.unref();
    }
  }

  /** Counts items that left the queue and wakes the settled() callers they were waited for by. */
  function leave(count: number): void {
    left += count;
    if (waiters.length === 0) return;
    const due = waiters.filter((w) => w.mark <= left);
    waiters = waiters.filter((w) => w.mark > left);
    for (const w of due) w.resolve();
  }

  function scheduleDelayedFlush(): void {
    if (delayTimer !== null || items.length === 0) return;
    delayTimer = setTimeout(() => {
      delayTimer = null;
      flushThrough = accepted;
      void kick();
    }, maxDelayMs);
    delayTimer.unref();
  }

  function kick(): Promise<void> {
    if (draining === null) {
      draining = drainLoop().finally(() => {
        draining = null;
      });
    }
    return draining;
  }

  async function drainLoop(): Promise<void> {
    while (items.length >= maxBatchSize || (items.length > 0 && (left < flushThrough || closed))) {
      if (deadlinePassed) return;
      const batch = items.slice(0, maxBatchSize);
      await writeWithRetry(batch);
      // Past close()'s deadline close() counts and removes what is held, this batch included.
      if (deadlinePassed) return;
      const held = items.length;
      items = items.slice(batch.length);
      leave(held - items.length);
    }
    scheduleDelayedFlush();
  }

  async function writeWithRetry(batch: T[]): Promise<void> {
    let attempt = 0;
    let firstFailureAt = 0;
    for (;;) {
      // Past close()'s deadline the batch is close()'s to count: nothing here counts it again.
      if (deadlinePassed) return;
      if (options.yieldWhile?.()) {
        backingOff = false;
        drop(batch.length, 'yielded');
        return;
      }
      attempt += 1;
      let written: { result: void | BatchWriteResult; durationMs: number };
      try {
        written = await slot.attempt(batch);
      } catch (error) {
        if (deadlinePassed) return;
        if (firstFailureAt === 0) firstFailureAt = Date.now();
        const rejected = (error as { retryable?: unknown } | null)?.retryable === false;
        const exhausted = attempt >= retry.maxAttempts || Date.now() - firstFailureAt >= retry.maxRetryMs;
        if (rejected || exhausted) {
          backingOff = false;
          log.error({ queue: options.name, err: error, attempts: attempt, batch: batch.length }, `log queue ${options.name}: giving up on a batch`);
          drop(batch.length, rejected ? 'rejected' : 'retries_exhausted');
          return;
        }
        stats.retries += 1;
        backingOff = true;
        try {
          options.onRetry?.(attempt, error);
        } catch {
          // ignore metrics errors
        }
        const backoff = Math.min(retry.maxBackoffMs, retry.initialBackoffMs * 2 ** (attempt - 1));
        const delay = backoff / 2 + Math.random() * (backoff / 2);
        if (attempt === 1) log.warn({ queue: options.name, err: error, batch: batch.length }, `log queue ${options.name}: write failed, retrying`);
        await sleepInterruptibly(delay);
        continue;
      }
      if (deadlinePassed) return;
      backingOff = false;
      const rejected = rejectedCount(written.result, batch.length);
      stats.written += batch.length - rejected;
      try {
        options.onWritten?.(batch.length - rejected, written.durationMs);
      } catch {
        // ignore metrics errors
      }
      drop(rejected, 'rejected');
      return;
    }
  }

  function sleepInterruptibly(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeBackoff = null;
        resolve();
      }
      wakeBackoff = done;
    });
  }

  return {
    name: options.name,

    push(item: T): boolean {
      if (closed) {
        drop(1, 'closed');
        return false;
      }
      if (items.length >= maxQueued) {
        drop(1, 'queue_full');
        return false;
      }
      items.push(item);
      accepted += 1;
      if (items.length >= maxBatchSize) void kick();
      else scheduleDelayedFlush();
      return true;
    },

    async flush(): Promise<void> {
      while (items.length > 0) {
        flushThrough = accepted;
        await kick();
      }
      if (draining) await draining;
    },

    settled(): Promise<void> {
      if (left >= accepted) return Promise.resolve();
      const mark = accepted;
      // Written now rather than at the batch delay: the caller is waiting.
      flushThrough = mark;
      void kick();
      return new Promise((resolve) => { waiters.push({ mark, resolve }); });
    },

    async close(deadlineMs = 10_000): Promise<void> {
      closed = true;
      if (delayTimer) {
        clearTimeout(delayTimer);
        delayTimer = null;
      }
      let deadline: NodeJS.Timeout | null = null;
      const deadlineReached = new Promise<void>((resolve) => {
        deadline = setTimeout(() => {
          deadlinePassed = true;
          wakeBackoff?.();
          resolve();
        }, deadlineMs);
      });
      const drained = (async () => {
        while (items.length > 0 && !deadlinePassed) await kick();
      })();
      // A write that hangs (a backend that never answers) must not hold shutdown past the deadline.
      await Promise.race([drained, deadlineReached]);
      if (deadline) clearTimeout(deadline);
      deadlinePassed = true;
      // Nothing waits for a call still running now (past the deadline, or of a batch given up).
      slot.abort();
      drop(items.length, 'close_deadline');
      leave(items.length);
      items = [];
      if (dropLogTimer) clearTimeout(dropLogTimer);
      reportDrops();
    },

    stats(): BatchQueueStats {
      const dropped = Object.values(stats.droppedByReason).reduce((a, b) => a + b, 0);
      return {
        queued: items.length,
        written: stats.written,
        dropped,
        droppedByReason: { ...stats.droppedByReason },
        retries: stats.retries,
        backingOff,
      };
    },
  };
}
