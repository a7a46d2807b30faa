// A write that never settles (a backend that accepts and never answers) must not hold its queue
// for good: past writeTimeoutMs the attempt counts as failed and is retried with backoff, items
// still leave (written or dropped and counted), and a call that settles late is counted once.
// The queue keeps one call in flight: a retry waits for the earlier call rather than piling on.
import t from 'tap';
import { Registry } from 'prom-client';
import { createBatchQueue, type DropReason } from '../../core/observer/batch-queue.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 5 ms for up to 5 s (a bound on a hang, not a speed figure). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await sleep(5);
}

/** A backend whose first `held` calls answer only when the test says (or never); later ones at once. */
function heldSink<T>(held = Infinity) {
  const calls: Array<{ batch: T[]; resolve: () => void; reject: (err: Error) => void }> = [];
  const written: T[] = [];
  return {
    calls,
    written,
    write(batch: T[]): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const call = { batch, resolve: () => { written.push(...batch); resolve(); }, reject };
        calls.push(call);
        if (calls.length > held) call.resolve();
      });
    },
  };
}

/** True when `p` settles within `ms` (a bound on a hang, not a speed figure). */
const within = async (p: Promise<unknown>, ms: number) => (await settlesWithin(p, ms)) !== 'pending';

t.test('a write that never settles: its attempts fail past the deadline, the batch is dropped and counted once, settled() resolves', async (t) => {
  const sink = heldSink<number>();
  const drops: Array<[number, DropReason]> = [];
  const warned: string[] = [];
  const q = createBatchQueue<number>({
    name: 'usage:hung', maxBatchSize: 3, maxDelayMs: 1, writeTimeoutMs: 20,
    retry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 },
    write: (b) => sink.write(b), onDropped: (n, r) => drops.push([n, r]),
    log: { warn: (o, msg) => warned.push(`${msg}: ${String((o as { err?: Error }).err?.message)}`), error: () => {} },
  });
  t.teardown(() => q.close(50));
  for (let i = 0; i < 3; i++) q.push(i);
  const settled = q.settled();
  await until(() => q.stats().retries >= 1);
  t.ok(q.stats().backingOff, 'a write past its deadline counts as failing (payloads give way meanwhile)');
  t.ok(await within(settled, 5_000), 'the items leave the queue: settled() resolves');
  t.same(drops, [[3, 'retries_exhausted']], 'dropped once its retry budget ran out, and counted once');
  t.equal(q.stats().retries, 2, 'each attempt past the deadline was a failed attempt');
  t.equal(sink.calls.length, 1, 'no second call while the first still runs');
  t.match(warned[0], /did not settle within 20 ms/, 'the log says the write timed out');
});

t.test('a hung write that answers late, after its attempt timed out: the batch is written once, by that call', async (t) => {
  const sink = heldSink<number>();
  const counted: number[] = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 2, maxDelayMs: 1, writeTimeoutMs: 20,
    retry: { initialBackoffMs: 5, maxBackoffMs: 5, maxRetryMs: 60_000 },
    write: (b) => sink.write(b), onWritten: (n) => counted.push(n),
  });
  t.teardown(() => q.close(50));
  q.push(1);
  q.push(2);
  await until(() => q.stats().retries >= 1);
  t.ok(q.stats().retries >= 1, 'the first attempt timed out and is retried');
  sink.calls[0]?.resolve();
  t.ok(await within(q.flush(), 5_000), 'the queue empties once the call answers');
  t.equal(sink.calls.length, 1, 'the batch was not sent again');
  t.same(sink.written, [1, 2]);
  t.same(counted, [2], 'written counted once');
  t.equal(q.stats().written, 2);
  t.equal(q.stats().dropped, 0);
  t.notOk(q.stats().backingOff);
});

t.test('a hung write that fails late: the next attempt sends the batch again, and it is written once', async (t) => {
  const sink = heldSink<number>();
  const counted: number[] = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 2, maxDelayMs: 1, writeTimeoutMs: 20,
    retry: { initialBackoffMs: 5, maxBackoffMs: 5, maxRetryMs: 60_000 },
    write: (b) => sink.write(b), onWritten: (n) => counted.push(n),
  });
  t.teardown(() => q.close(50));
  q.push(1);
  q.push(2);
  await until(() => q.stats().retries >= 1);
  t.ok(q.stats().retries >= 1, 'the first attempt timed out and is retried');
  t.equal(sink.calls.length, 1, 'one call while it runs');
  sink.calls[0]?.reject(new Error('connection reset'));
  await until(() => sink.calls.length === 2);
  t.equal(sink.calls.length, 2, 'once it failed, a new call');
  sink.calls[1]?.resolve();
  t.ok(await within(q.flush(), 5_000));
  t.same(sink.written, [1, 2], 'written once');
  t.same(counted, [2]);
  t.equal(q.stats().dropped, 0);
});

t.test('a call answering after its batch was given up counts nothing more; the next batch waits for it, then is written', async (t) => {
  const sink = heldSink<string>(1);
  const counted: number[] = [];
  const drops: Array<[number, DropReason]> = [];
  const q = createBatchQueue<string>({
    name: 't', maxBatchSize: 2, maxDelayMs: 1, writeTimeoutMs: 20,
    retry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 1 },
    write: (b) => sink.write(b), onWritten: (n) => counted.push(n), onDropped: (n, r) => drops.push([n, r]),
  });
  t.teardown(() => q.close(50));
  q.push('a1');
  q.push('a2');
  await until(() => drops.length > 0);
  t.same(drops, [[2, 'retries_exhausted']], 'the first batch is given up');
  q.push('b1');
  q.push('b2');
  await sleep(5);
  t.equal(sink.calls.length, 1, 'the next batch is not sent while the given-up call still runs');
  sink.calls[0]?.resolve();
  t.ok(await within(q.flush(), 5_000));
  t.equal(sink.calls.length, 2);
  t.same(sink.calls[1]?.batch, ['b1', 'b2']);
  t.same(counted, [2], 'only the second batch counts as written');
  t.equal(q.stats().written, 2);
  t.same(drops, [[2, 'retries_exhausted']], 'and the first stays counted once, as dropped');
});

for (const late of ['answers', 'fails'] as const) {
  t.test(`close() past its deadline with a write in flight that later ${late}: counted once, as close_deadline`, async (t) => {
    const sink = heldSink<number>();
    const counted: number[] = [];
    const drops: Array<[number, DropReason]> = [];
    const q = createBatchQueue<number>({
      name: 't', maxBatchSize: 100, maxDelayMs: 1, write: (b) => sink.write(b),
      onWritten: (n) => counted.push(n), onDropped: (n, r) => drops.push([n, r]),
    });
    for (let i = 0; i < 3; i++) q.push(i);
    await until(() => sink.calls.length === 1);
    await q.close(30);
    t.same(drops, [[3, 'close_deadline']]);
    if (late === 'answers') sink.calls[0]?.resolve();
    else sink.calls[0]?.reject(new Error('connection reset'));
    await sleep(20);
    t.same(drops, [[3, 'close_deadline']], 'not counted again');
    t.same(counted, [], 'nor counted as written');
    t.equal(q.stats().written, 0);
    t.equal(q.stats().dropped, 3);
    t.equal(sink.calls.length, 1, 'and not sent again after close');
  });
}

t.test('the observer: a usage backend whose writes never settle does not hold usageWritten() (queue.writeTimeoutMs)', async (t) => {
  const registry = new Registry();
  const observer = createObserver({
    settings: testSettings({ 'usage-logging': { backend: 'hung' } }), log: silentLog, metrics: registry,
    queue: { maxDelayMs: 1, writeTimeoutMs: 20, retry: { maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 1 } },
  });
  const sink = heldSink<UsageEvent>();
  observer.addUsageBackend({ id: 'hung', write: (b) => sink.write(b) });
  t.teardown(() => observer.close());
  observer.record(usageEvent(), null);
  t.ok(await within(observer.usageWritten(), 5_000), 'usageWritten() resolves: the event left the queue');
  const metrics = await registry.metrics();
  t.match(metrics, /relay_log_write_retries_total\{kind="usage",backend="hung"\} 1/, 'the timed-out attempt is a retry in /metrics');
  t.match(metrics, /relay_log_events_dropped_total\{kind="usage",backend="hung",reason="retries_exhausted"\} 1/, 'the event is counted as lost');
});
