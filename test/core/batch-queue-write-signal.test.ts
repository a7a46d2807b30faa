// Each write the queue makes is given an AbortSignal, aborted when the queue stops waiting for the
// call: at the write deadline and when close() ends with the call still running. A backend that
// honours it ends its hung call then, so the retry goes out without waiting for that call; one that
// ignores it is waited for, as before (batch-queue-write-deadline.test.ts).
import t from 'tap';
import { Registry } from 'prom-client';
import { createBatchQueue, type BatchWriteOptions, type DropReason } from '../../core/observer/batch-queue.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** A bound on a hang, many times what the deadlines under test need: not a speed figure. */
const BOUND_MS = 10_000;

/** Polls `check` every 5 ms for up to BOUND_MS. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < BOUND_MS / 5 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
}

/** A backend whose first `hung` calls never answer but end (rejecting with its reason) when their signal aborts; later ones write at once. */
function abortableSink<T>(hung = 1) {
  const calls: Array<{ batch: T[]; signal: AbortSignal | undefined; ended: Promise<unknown> }> = [];
  const written: T[] = [];
  return {
    calls,
    written,
    write(batch: T[], options?: BatchWriteOptions): Promise<void> {
      const signal = options?.signal;
      let ended: Promise<void>;
      if (calls.length >= hung) {
        written.push(...batch);
        ended = Promise.resolve();
      } else {
        ended = new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
      }
      calls.push({ batch, signal, ended: ended.catch((err: unknown) => err) });
      return ended;
    },
  };
}

t.test('a write past its deadline: its signal is aborted, the backend ends the call, and the retry writes the batch', async (t) => {
  const sink = abortableSink<number>();
  const retried: unknown[] = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 2, maxDelayMs: 1, writeTimeoutMs: 500,
    retry: { initialBackoffMs: 10, maxBackoffMs: 10, maxRetryMs: 60_000 },
    write: (b, o) => sink.write(b, o), onRetry: (_, err) => retried.push(err),
  });
  t.teardown(() => q.close(50));
  q.push(1);
  q.push(2);
  t.equal(await settlesWithin(q.flush(), BOUND_MS), 'resolved', 'the queue empties: the retry did not wait for the hung call');
  const first = sink.calls[0];
  t.ok(first?.signal instanceof AbortSignal, 'the write was given a signal');
  t.ok(first?.signal?.aborted, 'aborted at the deadline');
  t.match(first?.signal?.reason, { name: 'WriteTimedOut', message: /did not settle within 500 ms/ }, 'its reason says why');
  t.equal(await settlesWithin(first!.ended, BOUND_MS), 'resolved', 'the call ended');
  if (first?.signal?.aborted) t.equal(await first.ended, first.signal.reason, 'with that reason');
  t.match(retried[0], { name: 'WriteTimedOut' }, 'the attempt failed at its deadline and was retried');
  t.same(sink.calls[1]?.batch, [1, 2], 'the retry sent the batch again');
  t.same(sink.written, [1, 2], 'and it was written once');
  t.equal(q.stats().written, 2);
  t.equal(q.stats().dropped, 0);
});

t.test('a write that answers in time: its signal is never aborted, not even when the queue closes', async (t) => {
  const sink = abortableSink<number>(0);
  const q = createBatchQueue<number>({ name: 't', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 30_000, write: (b, o) => sink.write(b, o) });
  q.push(1);
  t.equal(await settlesWithin(q.flush(), BOUND_MS), 'resolved');
  await q.close(1_000);
  t.equal(sink.calls.length, 1);
  t.ok(sink.calls[0]?.signal instanceof AbortSignal, 'the write was given a signal');
  t.notOk(sink.calls[0]?.signal?.aborted, 'not aborted');
});

t.test('close() past its deadline aborts the write still running: the call ends, the batch is counted once as close_deadline', async (t) => {
  const sink = abortableSink<number>();
  const drops: Array<[number, DropReason]> = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 10, maxDelayMs: 1, writeTimeoutMs: 600_000,
    write: (b, o) => sink.write(b, o), onDropped: (n, r) => drops.push([n, r]),
  });
  for (let i = 0; i < 3; i++) q.push(i);
  await until(() => sink.calls.length > 0);
  t.equal(await settlesWithin(q.close(500), BOUND_MS), 'resolved', 'close() ends at its deadline');
  const call = sink.calls[0];
  t.ok(call?.signal?.aborted, 'the running write was aborted');
  t.match(call?.signal?.reason, { name: 'WriteAbandoned', message: /closed with this write still running/ });
  t.equal(await settlesWithin(call!.ended, BOUND_MS), 'resolved', 'and its call ended (long before its own 600 s deadline)');
  t.same(drops, [[3, 'close_deadline']], 'counted once, by close()');
  t.equal(sink.calls.length, 1, 'not sent again');
});

t.test('the observer hands each backend write the queue\'s signal', async (t) => {
  const registry = new Registry();
  const observer = createObserver({
    settings: testSettings({ 'usage-logging': { backend: 'abortable' } }), log: silentLog, metrics: registry,
    queue: { maxDelayMs: 1, writeTimeoutMs: 500, retry: { initialBackoffMs: 10, maxBackoffMs: 10, maxRetryMs: 60_000 } },
  });
  const sink = abortableSink<UsageEvent>();
  observer.addUsageBackend({ id: 'abortable', write: (b, o) => sink.write(b, o) });
  t.teardown(() => observer.close());
  const event = usageEvent();
  observer.record(event, null);
  t.equal(await settlesWithin(observer.usageWritten(), BOUND_MS), 'resolved');
  t.ok(sink.calls[0]?.signal?.aborted, 'the hung call was aborted');
  t.same(sink.written.map((e) => e.request_id), [event.request_id], 'the event was written by the retry');
  t.match(await registry.metrics(), /relay_log_events_written_total\{kind="usage",backend="abortable"\} 1/);
});
