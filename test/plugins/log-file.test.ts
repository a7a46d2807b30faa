import t from 'tap';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FileUsageBackend, type FileUsageBackendOptions } from '../../plugins/log-file/file-usage-backend.ts';
import plugin from '../../plugins/log-file/index.ts';
import { usageBackendSuite, makeEvents } from '../support/usage-backend-suite.ts';
import { Registry } from 'prom-client';
import { createObserver } from '../../core/observer/observer.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'relay-log-file-'));
}

function options(dir: string, overrides: Partial<FileUsageBackendOptions> = {}): FileUsageBackendOptions {
  return { dir, maxFileBytes: 32 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 512 << 20, orderSkewMs: 5000, ...overrides };
}

t.test('conformance: one segment', async (t) => {
  usageBackendSuite(t, async () => {
    const dir = await tempDir();
    const backend = new FileUsageBackend(options(dir));
    return { backend, cleanup: async () => { await backend.close(); await rm(dir, { recursive: true, force: true }); } };
  });
});

t.test('conformance: many small rotated segments', async (t) => {
  usageBackendSuite(t, async () => {
    const dir = await tempDir();
    const backend = new FileUsageBackend(options(dir, { maxFileBytes: 4096 }));
    return { backend, cleanup: async () => { await backend.close(); await rm(dir, { recursive: true, force: true }); } };
  }, { batchSize: 3 });
});

t.test('rotation by size, skipped broken lines, retention', async (t) => {
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const backend = new FileUsageBackend(options(dir, { maxFileBytes: 4096, retentionDays: 1 }));
  const events = makeEvents(Date.now() - 3_600_000, 40);
  for (const e of events) await backend.write([e]);
  await backend.close();
  const files = (await readdir(dir)).sort();
  t.ok(files.length > 3, `rotated into ${files.length} segments`);
  for (const f of files) {
    const text = await readFile(path.join(dir, f), 'utf8');
    t.ok(Buffer.byteLength(text) <= 4096, `${f} within maxFileBytes`);
  }
  // A line cut by a crash is skipped, not fatal.
  await writeFile(path.join(dir, files[0]), '{"request_id":"cut", "started', { flag: 'a' });
  t.equal((await backend.list({ limit: 500 })).items.length, 40);
  // Segments older than retentionDays go on the next rotation.
  const old = Date.now() / 1000 - 3 * 86_400;
  await utimes(path.join(dir, files[0]), old, old);
  const again = new FileUsageBackend(options(dir, { maxFileBytes: 4096, retentionDays: 1 }));
  await again.write([usageEvent()]);
  await new Promise((r) => setTimeout(r, 50));
  t.notOk((await readdir(dir)).includes(files[0]), 'expired segment removed');
  await again.close();
});

t.test('a query that would scan past maxScanBytes is refused, not answered partly', async (t) => {
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const backend = new FileUsageBackend(options(dir, { maxScanBytes: 2048 }));
  await backend.write(makeEvents(Date.now() - 3_600_000, 30));
  await t.rejects(backend.summary({}), { code: 'RELAY_ERR_QUERY_UNSUPPORTED' });
  await t.rejects(backend.list({ limit: 500, policyId: 'nope' }), { code: 'RELAY_ERR_QUERY_UNSUPPORTED' });
  await backend.close();
});

t.test('the plugin registers a file backend under the data directory', async (t) => {
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const backends: Array<{ id: string; write(e: never[]): Promise<void>; close?(): Promise<void> }> = [];
  const relay = { dataDir: dir, hooks: { addUsageBackend: (b: never) => backends.push(b) } };
  await plugin.register(relay as never, { dir: 'usage', maxFileBytes: 1 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 });
  t.equal(backends.length, 1);
  t.equal(backends[0].id, 'file');
  await backends[0].write([usageEvent()] as never[]);
  await backends[0].close?.();
  t.equal((await readdir(path.join(dir, 'usage'))).length, 1);
});

t.test('the observer hands events over and each is written as its JSON.stringify line, multi-byte text whole', async (t) => {
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const observer = createObserver({ settings: testSettings(), log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  observer.addUsageBackend(new FileUsageBackend(options(dir)));
  const events = [
    usageEvent({ request_id: 'multi-1', extras: { note: 'café ✓ 日本語 🚀', quote: 'a "b" \\ \u0001' } }),
    usageEvent({ request_id: 'multi-2', model_requested: 'modèle-ü', cost: 0.037838, latency_ms: 12.345, ttfb_ms: null }),
  ];
  for (const e of events) observer.record(e, null);
  await observer.close();
  const [segment] = await readdir(dir);
  const text = await readFile(path.join(dir, segment), 'utf8');
  t.equal(text, events.map((e) => `${JSON.stringify(e)}\n`).join(''), 'exactly JSON.stringify of each event, one per line');
  const reader = new FileUsageBackend(options(dir));
  t.same(await reader.get('multi-1'), events[0]);
  await reader.close();
});
