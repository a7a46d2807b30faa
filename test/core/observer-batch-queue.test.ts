import t from 'tap';
import { createBatchQueue, type DropReason } from '../../core/observer/batch-queue.ts';

/** A sink that can be taken down and brought back, like a backend during an outage. */
function flakySink() {
  const written: number[] = [];
  let down = false;
  let calls = 0;
  return {
    written,
    get calls() { return calls; },
    setDown(value: boolean) { down = value; },
    async write(batch: number[]) {
      calls += 1;
      await new Promise((r) => setImmediate(r));
      if (down) throw new Error('backend down');
      written.push(...batch);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('batches by size and by delay', async (t) => {
  const batches: number[][] = [];
  const q = createBatchQueue<number>({ name: 't', maxBatchSize: 10, maxDelayMs: 50, write: async (b) => { batches.push(b); } });
  for (let i = 0; i < 25; i++) q.push(i);
  await sleep(5);
  t.same(batches.map((b) => b.length), [10, 10], 'full batches are written at once');
  await sleep(100);
  t.same(batches.map((b) => b.length), [10, 10, 5], 'the rest after maxDelayMs');
  t.same(batches.flat(), Array.from({ length: 25 }, (_, i) => i), 'in order');
  t.equal(q.stats().written, 25);
  await q.close();
});

t.test('backend down during a run: events wait, retry with backoff, and are all written when it returns', async (t) => {
  const sink = flakySink();
  const drops: Array<[number, DropReason]> = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 20, maxDelayMs: 10, maxQueued: 1000,
    retry: { initialBackoffMs: 5, maxBackoffMs: 40, maxRetryMs: 60_000 },
    write: (b) => sink.write(b), onDropped: (n, r) => drops.push([n, r]),
  });
  for (let i = 0; i < 50; i++) q.push(i);
  await q.flush();
  sink.setDown(true);
  for (let i = 50; i < 400; i++) q.push(i);
  await sleep(150);
  t.ok(q.stats().retries >= 2, `retried while down (${q.stats().retries})`);
  t.equal(q.stats().queued, 350, 'events wait in the queue');
  t.ok(q.stats().backingOff);
  sink.setDown(false);
  await q.flush();
  t.same(sink.written, Array.from({ length: 400 }, (_, i) => i), 'every event written once, in order');
  t.same(drops, [], 'nothing dropped within the bound');
  t.equal(q.stats().queued, 0);
  await q.close();
});

t.test('beyond the bound the loss is counted, never silent', async (t) => {
  const sink = flakySink();
  sink.setDown(true);
  const drops: Array<[number, DropReason]> = [];
  const logged: string[] = [];
  const q = createBatchQueue<number>({
    name: 'usage:test', maxBatchSize: 10, maxDelayMs: 5, maxQueued: 100,
    retry: { initialBackoffMs: 5, maxBackoffMs: 10, maxRetryMs: 60_000 },
    write: (b) => sink.write(b), onDropped: (n, r) => drops.push([n, r]),
    log: { warn: () => {}, error: (_o, msg) => logged.push(msg) },
  });
  let accepted = 0;
  for (let i = 0; i < 150; i++) if (q.push(i)) accepted += 1;
  t.equal(accepted, 100, 'push accepts up to maxQueued');
  t.equal(q.stats().dropped, 50);
  t.equal(q.stats().droppedByReason.queue_full, 50);
  t.equal(drops.reduce((n, [c]) => n + c, 0), 50, 'onDropped saw every loss');
  t.ok(logged.some((m) => m.includes('dropped')), 'the loss is reported in the log');
  sink.setDown(false);
  await q.flush();
  t.equal(sink.written.length, 100, 'what was held is written once the backend returns');
  await q.close();
});

t.test('a batch is dropped and counted when its retry budget runs out', async (t) => {
  const sink = flakySink();
  sink.setDown(true);
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 5, maxDelayMs: 1, retry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 }, write: (b) => sink.write(b),
  });
  for (let i = 0; i < 5; i++) q.push(i);
  await q.flush();
  t.equal(sink.calls, 3, 'tried maxAttempts times');
  t.equal(q.stats().droppedByReason.retries_exhausted, 5);
  sink.setDown(false);
  q.push(99);
  await q.flush();
  t.same(sink.written, [99], 'the queue goes on after a dropped batch');
  await q.close();
});

t.test('close flushes what it can within its deadline and counts the rest', async (t) => {
  const ok = flakySink();
  const q1 = createBatchQueue<number>({ name: 'ok', maxBatchSize: 100, maxDelayMs: 60_000, write: (b) => ok.write(b) });
  for (let i = 0; i < 10; i++) q1.push(i);
  await q1.close(1000);
  t.equal(ok.written.length, 10, 'close writes pending items without waiting for the delay');
  t.notOk(q1.push(1), 'push after close is refused');
  t.equal(q1.stats().droppedByReason.closed, 1);

  const hung = createBatchQueue<number>({ name: 'hung', maxBatchSize: 100, maxDelayMs: 1, write: () => new Promise(() => {}) });
  for (let i = 0; i < 7; i++) hung.push(i);
  const started = Date.now();
  await hung.close(100);
  t.ok(Date.now() - started < 1000, 'a hanging backend does not hold shutdown');
  t.equal(hung.stats().droppedByReason.close_deadline, 7, 'what was not written is counted');
});

t.test('push never throws, even when the writer and callbacks throw', async (t) => {
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 1, maxDelayMs: 1, retry: { maxAttempts: 1 },
    write: () => { throw new Error('sync throw'); },
    onDropped: () => { throw new Error('metrics broke'); },
  });
  t.doesNotThrow(() => { for (let i = 0; i < 10; i++) q.push(i); });
  await q.flush();
  t.equal(q.stats().droppedByReason.retries_exhausted, 10);
  await q.close();
});

t.test('yieldWhile: a failing batch stops retrying and new batches are dropped, not written, while another queue comes first', async (t) => {
  const sink = flakySink();
  sink.setDown(true);
  let yielding = false;
  const drops: Array<[number, DropReason]> = [];
  const q = createBatchQueue<number>({
    name: 't', write: (b) => sink.write(b), maxBatchSize: 2, maxDelayMs: 5,
    retry: { initialBackoffMs: 10, maxBackoffMs: 10 }, yieldWhile: () => yielding, onDropped: (n, r) => drops.push([n, r]),
  });
  q.push(1);
  q.push(2);
  await sleep(30);
  t.ok(q.stats().retries > 0, 'retrying while nothing else comes first');
  yielding = true;
  const callsThen = sink.calls;
  await sleep(40);
  t.same(drops, [[2, 'yielded']], 'the failing batch gives way at its next retry');
  t.ok(sink.calls <= callsThen + 1, 'and is not retried again');
  sink.setDown(false);
  q.push(3);
  await q.flush();
  t.same(sink.written, [], 'a new batch is dropped without a write');
  t.equal(q.stats().droppedByReason.yielded, 3);
  yielding = false;
  q.push(4);
  await q.flush();
  t.same(sink.written, [4], 'written again once nothing comes first');
  await q.close();
});

t.test('a write that throws retryable: false drops its batch at once, without retries', async (t) => {
  let calls = 0;
  const drops: Array<[number, DropReason]> = [];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 2, maxDelayMs: 5, retry: { initialBackoffMs: 5, maxBackoffMs: 5 },
    write: async (b) => {
      calls += 1;
      if (b.includes(1)) throw Object.assign(new Error('no room'), { retryable: false });
    },
    onDropped: (n, r) => drops.push([n, r]),
  });
  q.push(1);
  q.push(2);
  q.push(3);
  await q.flush();
  t.same(drops, [[2, 'rejected']]);
  t.equal(calls, 2, 'one attempt for the refused batch, one for the next');
  t.equal(q.stats().retries, 0);
  t.equal(q.stats().written, 1);
  await q.close();
});

t.test('a write that resolves with { rejected } wrote the rest: the rejected items are counted as dropped, once', async (t) => {
  const drops: Array<[number, DropReason]> = [];
  const written: number[] = [];
  const results = [{ rejected: 2 }, { rejected: 99 }, { rejected: -1 }, undefined];
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 3, maxDelayMs: 5,
    write: async () => results.shift(),
    onDropped: (n, r) => drops.push([n, r]),
    onWritten: (n) => written.push(n),
  });
  for (let i = 0; i < 12; i++) q.push(i);
  await q.flush();
  t.same(drops, [[2, 'rejected'], [3, 'rejected']], 'a count beyond the batch is the batch; a negative one nothing');
  t.same(written, [1, 0, 3, 3]);
  t.equal(q.stats().written, 7);
  t.equal(q.stats().droppedByReason.rejected, 5);
  t.equal(q.stats().retries, 0, 'never retried');
  await q.close();
});

t.test('settled: resolves once the items pushed before it have left, whatever is pushed after', async (t) => {
  const written: number[] = [];
  const q = createBatchQueue<number>({ name: 't', maxBatchSize: 2, maxDelayMs: 60_000,
    write: async (b) => { await new Promise((r) => setImmediate(r)); written.push(...b); } });
  await q.settled();
  t.pass('an empty queue is settled at once');
  for (let i = 0; i < 3; i++) q.push(i);
  const settled = q.settled();
  for (let i = 3; i < 9; i++) q.push(i);
  // Resolving at all says so: item 2 waits for a 60 s batch delay unless settled() writes it now.
  await settled;
  t.same(written.slice(0, 3), [0, 1, 2], 'after the items pushed before it were written');
  await q.close();
});

t.test('under a steady trickle, batches still wait for their delay rather than following each write', async (t) => {
  const batches: number[][] = [];
  const pushedAt = new Map<number, number>();
  let longestWait = 0;
  // A write that takes a few milliseconds, as an append through Node's thread pool or an INSERT does.
  const q = createBatchQueue<number>({
    name: 't', maxBatchSize: 500, maxDelayMs: 100,
    write: async (b) => {
      for (const i of b) longestWait = Math.max(longestWait, Date.now() - pushedAt.get(i)!);
      batches.push(b);
      await sleep(3);
    },
  });
  const start = Date.now();
  // How late this machine's timers run, so the wait bound below allows for a loaded CI host.
  let timerLateness = 0;
  for (let i = 0; Date.now() - start < 450; i++) {
    pushedAt.set(i, Date.now());
    q.push(i);
    const before = Date.now();
    await sleep(1);
    timerLateness = Math.max(timerLateness, Date.now() - before - 1);
  }
  await q.flush();
  const pushed = pushedAt.size;
  t.same(batches.flat(), Array.from({ length: pushed }, (_, i) => i), 'every item written once, in order');
  // 450 ms of items at a 100 ms delay: about one batch per delay, not one per 3 ms write.
  t.ok(batches.length <= 8, `${batches.length} writes for ${pushed} items`);
  // The documented bound: the delay, plus the write ahead of it, plus however late the timer fired.
  const bound = 100 + 3 + timerLateness + 20;
  t.ok(longestWait < bound, `no item waited much past the delay (longest ${longestWait} ms, bound ${bound} ms)`);
  await q.close();
});
