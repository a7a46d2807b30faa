import t from 'tap';
import { Registry } from 'prom-client';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../../core/testing.ts';
import { USAGE_MAX_DELAY_MS, createObserver } from '../../core/observer/observer.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { FilePayloadBackend } from '../../plugins/payload-file/file-payload-backend.ts';
import type { PayloadBackend, UsageBackend } from '../../core/observer/types.ts';
import type { CapturedPayload, UsageEvent } from '../../core/hooks.ts';
import { capturedPayload, silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

function memoryUsage(id: string, opts: { delayMs?: number } = {}): UsageBackend & { events: UsageEvent[] } {
  const events: UsageEvent[] = [];
  return {
    id, events,
    async write(batch) {
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      events.push(...batch);
    },
  };
}

function memoryPayload(id: string): PayloadBackend & { payloads: CapturedPayload[] } {
  const payloads: CapturedPayload[] = [];
  return { id, payloads, async write(batch) { payloads.push(...batch); }, async get(rid) { return payloads.find((p) => p.request_id === rid) ?? null; } };
}

t.test('the payload gate: global switch AND (policy OR key)', async (t) => {
  const settings = testSettings();
  const observer = createObserver({ settings, log: silentLog, metrics: new Registry() });
  const cases: Array<[boolean, boolean]> = [[false, false], [true, false], [false, true], [true, true]];
  for (const [policy, key] of cases) t.equal(observer.shouldCapture(policy, key), false, `disabled globally: policy=${policy} key=${key} -> no`);
  settings.set('payload-logging', { enabled: true, backend: 'file', maxBytes: 1000, viewersReadPayloads: false });
  t.equal(observer.shouldCapture(false, false), false, 'neither policy nor key -> no');
  t.equal(observer.shouldCapture(true, false), true, 'policy opted in -> yes');
  t.equal(observer.shouldCapture(false, true), true, 'key opted in -> yes');
  t.equal(observer.shouldCapture(true, true), true, 'both -> yes');
  t.equal(observer.payloadMaxBytes(), 1000);
  await observer.close();
});

t.test('record is synchronous and routes to the selected backends', async (t) => {
  const settings = testSettings({ 'payload-logging': { enabled: true, backend: 'mem', maxBytes: 100, viewersReadPayloads: false } });
  const registry = new Registry();
  const observer = createObserver({ settings, log: silentLog, metrics: registry, queue: { maxDelayMs: 5 } });
  const file = memoryUsage('file', { delayMs: 50 });
  const payloads = memoryPayload('mem');
  observer.addUsageBackend(file);
  observer.addPayloadBackend(payloads);
  const event = usageEvent();
  // Not a timing bound (a loaded CI machine took over 5 ms for this first call): record returns
  // nothing to wait for, and the backend (which takes 50 ms per write) has written nothing yet.
  t.equal(observer.record(event, capturedPayload(event.request_id)) as unknown, undefined, 'record returns nothing to wait for');
  t.equal(file.events.length, 0, 'and returns before the backend has written');
  await observer.flush();
  t.same(file.events, [event]);
  t.equal(payloads.payloads.length, 1);
  t.equal(observer.usageBackend(), file);
  t.equal(observer.payloadBackend(), payloads);
  const text = await registry.metrics();
  t.match(text, /relay_log_events_written_total\{kind="usage",backend="file"\} 1/);
  t.match(text, /relay_log_events_recorded_total\{kind="payload",backend="mem"\} 1/);
  t.match(text, /relay_log_queue_depth\{kind="usage",backend="file"\} 0/);
  t.throws(() => observer.addUsageBackend(memoryUsage('file')), /already registered/);
  await observer.close();
});

t.test('payloads are not queued while the global switch is off', async (t) => {
  const settings = testSettings();
  const observer = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 1 } });
  const payloads = memoryPayload('file');
  observer.addUsageBackend(memoryUsage('file'));
  observer.addPayloadBackend(payloads);
  const event = usageEvent();
  observer.record(event, capturedPayload(event.request_id));
  await observer.flush();
  t.equal(payloads.payloads.length, 0);
  await observer.close();
});

t.test('switching the usage backend takes effect at once and loses nothing in flight', async (t) => {
  const settings = testSettings();
  const observer = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 20, maxBatchSize: 7 } });
  const file = memoryUsage('file', { delayMs: 10 });
  const pg = memoryUsage('postgres');
  observer.addUsageBackend(file);
  observer.addUsageBackend(pg);
  const before = Array.from({ length: 30 }, () => usageEvent());
  const after = Array.from({ length: 30 }, () => usageEvent());
  for (const e of before) observer.record(e, null);
  settings.set('usage-logging', { backend: 'postgres' });
  for (const e of after) observer.record(e, null);
  t.equal(observer.usageBackend(), pg, 'reads go to the new backend');
  await observer.flush();
  t.same(file.events, before, 'events queued for the old backend drained into it');
  t.same(pg.events, after, 'new events went to the new backend');
  await observer.close();
});

t.test('a selected backend that is not loaded: counted and logged, never thrown', async (t) => {
  const settings = testSettings({ 'usage-logging': { backend: 'clickhouse' } });
  const errors: string[] = [];
  const registry = new Registry();
  const observer = createObserver({ settings, log: { ...silentLog, error: (_o: object, m: string) => { errors.push(m); } }, metrics: registry });
  t.doesNotThrow(() => observer.record(usageEvent(), null));
  t.equal(observer.stats().unroutable, 1);
  t.equal(observer.usageBackend(), null);
  t.match(errors[0], /not loaded/);
  t.match(await registry.metrics(), /relay_log_events_dropped_total\{kind="usage",backend="clickhouse",reason="backend_not_loaded"\} 1/);
  await observer.close();
});

t.test('recorders are detached: their errors never reach the caller', async (t) => {
  const settings = testSettings();
  const registry = new Registry();
  const observer = createObserver({ settings, log: silentLog, metrics: registry });
  observer.addUsageBackend(memoryUsage('file'));
  const seen: string[] = [];
  observer.addRecorder('broken', () => { throw new Error('boom'); });
  observer.addRecorder('good', (e) => { seen.push(e.request_id); });
  const event = usageEvent();
  t.doesNotThrow(() => observer.record(event, null));
  t.same(seen, [], 'recorders run after record returns');
  await new Promise((r) => setImmediate(r));
  t.same(seen, [event.request_id], 'a throwing recorder does not stop the others');
  t.match(await registry.metrics(), /relay_log_recorder_failures_total\{recorder="broken"\} 1/);
  await observer.close();
});

t.test('close flushes every queue and closes the backends', async (t) => {
  const settings = testSettings();
  const observer = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 60_000 } });
  let closed = 0;
  const file = { ...memoryUsage('file'), close: async () => { closed += 1; } };
  const events: UsageEvent[] = [];
  file.write = async (b) => { events.push(...b); };
  observer.addUsageBackend(file);
  for (let i = 0; i < 5; i++) observer.record(usageEvent(), null);
  await observer.close();
  t.equal(events.length, 5);
  t.equal(closed, 1);
});

t.test('usage records win: while a usage write fails, payload batches give way instead of being written or retried', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-observer-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const usageDir = path.join(dir, 'usage');
  const payloadDir = path.join(dir, 'payloads');
  await writeFile(usageDir, 'in the way'); // a file where the segments' directory should be: every usage write fails
  const settings = testSettings({ 'payload-logging': { enabled: true, backend: 'file', maxBytes: 1000, viewersReadPayloads: false } });
  const observer = createObserver({
    settings, log: silentLog, metrics: new Registry(),
    queue: { maxDelayMs: 5, retry: { initialBackoffMs: 20, maxBackoffMs: 20 } },
  });
  observer.addUsageBackend(new FileUsageBackend({ dir: usageDir, maxFileBytes: 1 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 }));
  const payloads = new FilePayloadBackend({ dir: payloadDir, retentionDays: 30 });
  observer.addPayloadBackend(payloads);

  const during = usageEvent({ request_id: 'during-outage' });
  observer.record(during, null);
  await eventually(() => observer.stats().usage.file!.backingOff, 2_000, 5);
  const later = usageEvent({ request_id: 'while-failing' });
  observer.record(later, capturedPayload(later.request_id));
  await eventually(() => observer.stats().payload.file!.dropped === 1, 2_000, 5);
  t.same(observer.stats().payload.file!.droppedByReason.yielded, 1, 'the payload gave way');
  t.equal(observer.stats().payload.file!.written, 0);
  t.equal(await payloads.get('while-failing'), null, 'no payload took the disk while usage records could not be written');

  await rm(usageDir);
  await eventually(() => observer.stats().usage.file!.written === 2, 5_000, 10);
  const after = usageEvent({ request_id: 'after-outage' });
  observer.record(after, capturedPayload(after.request_id));
  await observer.flush();
  t.ok(await payloads.get('after-outage'), 'once usage writes succeed, payloads are written again');
  const reader = new FileUsageBackend({ dir: usageDir, maxFileBytes: 1 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 });
  t.ok(await reader.get('during-outage') && await reader.get('while-failing'), 'the usage records held through the outage are written');
  await observer.close();
  await reader.close();
});

t.test('usage events are written within 100 ms by default (the loss window of a crash)', async (t) => {
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'mem' } }), log: silentLog, metrics: new Registry() });
  const mem = memoryUsage('mem');
  observer.addUsageBackend(mem);
  t.equal(USAGE_MAX_DELAY_MS, 100);
  observer.record(usageEvent(), null);
  const started = Date.now();
  await eventually(() => mem.events.length === 1, 2_000, 5);
  t.ok(Date.now() - started < 400, `written after ${Date.now() - started} ms`);
  await observer.close();
});
