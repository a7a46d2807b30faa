// A soak: sustained mixed load (streamed and not, passthrough and translated) against a Relay
// process for SOAK_SECONDS (default 60), sampling its live heap (after a full collection the test
// asks for through the inspector), RSS and open file descriptors.
// After the warm-up third, neither the live set (the heap after each full collection, from
// /metrics) nor the descriptors may keep growing, and descriptors return to their level once the
// load stops. Every request must succeed.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, seedRoute } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { freePort, startRelayProcess } from '../support/relay-process.ts';
import { WebSocket } from 'undici';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONCURRENCY = 16;
t.setTimeout((SECONDS + 120) * 1000);

const upstream = await startFakeUpstream({ chunks: 20, record: false });
const db = await createTestDatabase();
const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-soak-'));
const configFile = path.join(dir, 'relay.yaml');
writeFileSync(configFile, ['server: { host: 127.0.0.1 }', 'log: { level: warn }', 'plugins:',
  ...['auth-bearer', 'wire-vendor-a', 'wire-vendor-b', 'vendor-openai', 'vendor-anthropic', 'log-file'].map((p) => `  - use: ${p}`), ''].join('\n'));
// The inspector, on loopback, lets the test run a full collection before each sample: left to
// itself V8 may run none in a minute (one clean-clone CI run read no full collection at all, with
// less garbage per request and a slower machine), and the live set is only known after one.
const inspectorPort = await freePort();
const relay = await startRelayProcess({
  name: 'soak', configFile, adminToken: 'soak-admin-token', env: { DATABASE_URL: db.url, RELAY_MASTER_KEY: generateMasterKey() },
  nodeArgs: [`--inspect=127.0.0.1:${inspectorPort}`],
});
const inspector = await connectInspector(inspectorPort);
t.teardown(async () => {
  inspector.close();
  await relay.dispose();
  await upstream.close();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const oa = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'soak-gpt' });
const an = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'anthropic', model: 'soak-claude' });

const pid = relay.child.pid!;
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const openFds = () => readdirSync(`/proc/${pid}/fd`).length;
/** The Relay process's inspector session: `collectGarbage()` runs a full collection there. */
async function connectInspector(port: number): Promise<{ collectGarbage(): Promise<void>; close(): void }> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')), { once: true });
  });
  const pending = new Map<number, () => void>();
  ws.addEventListener('message', (event) => {
    const reply = JSON.parse(String(event.data)) as { id?: number };
    if (reply.id !== undefined) pending.get(reply.id)?.();
    pending.delete(reply.id!);
  });
  let nextId = 1;
  return {
    collectGarbage: () => new Promise<void>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
    }),
    close: () => ws.close(),
  };
}

/** relay_heap_used_after_major_gc_bytes in MB (0 until the first full collection). */
const liveHeapMb = async () => {
  const text = (await relay.api<string>('GET', '/metrics')).body;
  const m = /^relay_heap_used_after_major_gc_bytes (\S+)$/m.exec(String(text));
  return m ? Number(m[1]) / 1048576 : NaN;
};

const kinds = [
  { path: '/vendor-a/v1/chat/completions', key: oa.relayKey, body: { model: 'soak-gpt', messages: [{ role: 'user', content: 'hi' }] } },
  { path: '/vendor-a/v1/chat/completions', key: oa.relayKey, body: { model: 'soak-gpt', stream: true, messages: [{ role: 'user', content: 'hi' }] } },
  { path: '/vendor-b/v1/messages', key: an.relayKey, body: { model: 'soak-claude', max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] } },
  { path: '/vendor-a/v1/responses', key: an.relayKey, body: { model: 'soak-claude', stream: true, input: 'hi' } }, // translated
];

t.test(`${SECONDS} s of mixed load: steady RSS, no growth in open handles, no failure`, async (t) => {
  const fdsBefore = openFds();
  const samples: Array<{ at: number; rss: number; fds: number; live: number }> = [];
  let done = 0;
  let failed = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const worker = async (w: number) => {
    for (let i = w; Date.now() < deadline; i++) {
      const k = kinds[i % kinds.length];
      try {
        const res = await fetch(relay.inferenceUrl + k.path, {
          method: 'POST', headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' }, body: JSON.stringify(k.body),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.status === 200) done++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  const sampling: Array<Promise<void>> = [];
  const sampler = setInterval(() => {
    const at = Date.now();
    const rss = rssMb();
    const fds = openFds();
    // A full collection first; the gauge is set by a GC observer a moment after it.
    sampling.push(inspector.collectGarbage()
      .then(() => new Promise((r) => setTimeout(r, 50)))
      .then(liveHeapMb)
      .then((live) => void samples.push({ at, rss, fds, live }), () => undefined));
  }, 2_000);
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  clearInterval(sampler);
  await Promise.all(sampling);
  await new Promise((r) => setTimeout(r, 3_000)); // queues drain
  const fdsAfter = openFds();

  // After the warm-up third: the pools hold their connections (clients' and upstreams'
  // keep-alive sockets), so the measure is growth within the steady phase, not against idle.
  // The steady phase also starts after the first full collection under load: that one can run
  // before the process has built its working set (JIT code, pools): one clean-clone CI run read at
  // most 28.9 MB in the first half and 40.3 MB in the second, while local runs of 60-90 s read
  // 38-40 MB at every collection after the first. The gauge keeps the last collection's figure, so
  // the second collection is the first sample that differs from it.
  const firstLive = samples.find((s) => s.live > 0)?.live;
  const secondCollection = samples.findIndex((s) => s.live > 0 && s.live !== firstLive);
  const steady = samples.slice(Math.max(Math.floor(samples.length / 3), secondCollection));
  const half = Math.floor(steady.length / 2);
  // Growth is judged on the live set, not on RSS: under load RSS saws between V8's old-space
  // collections (147-211 MB over 75 s while the heap after every full collection stayed within
  // 2 MB), so two halves of RSS samples differ by 40 MB with nothing leaking.
  const live = (xs: typeof steady) => Math.max(...xs.map((s) => s.live).filter((v) => v > 0));
  const earlyLive = live(steady.slice(0, half));
  const lateLive = live(steady.slice(half));
  const peakRss = Math.max(...steady.map((s) => s.rss));
  const earlyFds = Math.max(...steady.slice(0, half).map((s) => s.fds));
  const lateFds = Math.max(...steady.slice(half).map((s) => s.fds));
  t.comment(`requests ${done} ok, ${failed} failed; live heap after full collections ${earlyLive.toFixed(1)} MB in the first half of the steady phase, ${lateLive.toFixed(1)} MB in the second; RSS peak ${peakRss.toFixed(0)} MB; fds ${fdsBefore} idle, ${earlyFds} -> ${lateFds} under load, ${fdsAfter} after`);
  t.equal(failed, 0, 'every request succeeded');
  // Enough requests for the soak to mean something; how many a machine serves is not what it tests.
  t.ok(done > SECONDS * 5, `sustained load (${done} requests)`);
  t.ok(Number.isFinite(earlyLive) && Number.isFinite(lateLive), 'full collections happened in both halves');
  t.ok(lateLive - earlyLive < 10, `live heap steady (${(lateLive - earlyLive).toFixed(1)} MB more in the second half)`);
  t.ok(peakRss < 400, `RSS bounded (peak ${peakRss.toFixed(0)} MB)`);
  t.ok(lateFds <= earlyFds + 4, `no growth in open handles under load (${earlyFds} -> ${lateFds})`);
  // Connections stay open after the load (Fastify keeps idle ones 72 s), so this is no growth rather
  // than a return to idle. The sampler's own control-plane calls can open one more connection
  // after its last count (87 -> 88 in one full-suite run on a loaded machine): a leak grows by more.
  t.ok(fdsAfter <= lateFds + 2, `handles do not grow after the load stops (${lateFds} -> ${fdsAfter})`);
});
