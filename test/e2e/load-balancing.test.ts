// Load balancing by what is measured (issue 42 item 4), through real HTTP to fake upstreams:
// lowest-latency moves traffic off a slow binding once each binding was measured (within two
// requests), and shares what it measured with other instances through Valkey; least-in-flight
// spreads concurrent requests; a key's cooldown still decides over the strategy.
import t from 'tap';
import { Redis } from 'ioredis';
import { startRelay, seedRoute, createTestDatabase, type Seeded, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream, faults, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/9';
const db = await createTestDatabase();
const config = { valkey: { url: REDIS_URL } };
const a = await startRelay({ database: db.url, config, logLevel: 'warn' });
const b = await startRelay({ database: db.url, config, masterKey: a.masterKey, logLevel: 'warn' });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await a.close();
  await b.close();
  for (const up of upstreams) await up.close();
  await db.drop();
});

let n = 0;
/** A model with two bindings, on a fast and a slow upstream, balanced by `balancing`. */
async function pair(balancing: string, slowMs: number, fastMs = 0): Promise<{ fast: FakeUpstream; slow: FakeUpstream; seeded: Seeded; slug: string }> {
  const fast = await startFakeUpstream({ headersDelayMs: fastMs });
  const slow = await startFakeUpstream({ headersDelayMs: slowMs });
  upstreams.push(fast, slow);
  const slug = `lb-${++n}`;
  const seeded = await seedRoute(a, { baseUrl: `${fast.url}/v1`, adapter: 'openai', model: slug });
  const other = await seedRoute(a, { baseUrl: `${slow.url}/v1`, adapter: 'openai', model: slug });
  const res = await a.api('PUT', `/api/models/by-id/${seeded.modelId}`, { spec: { balancing } });
  if (res.status !== 200) throw new Error(`balancing: ${res.status} ${JSON.stringify(res.body)}`);
  for (const relay of [a, b]) {
    await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.models.get(seeded.modelId)?.spec.balancing === balancing
      && s.models.get(seeded.modelId)?.spec.bindings.length === 2 && s.hostKeysOfHost(seeded.hostId).length === 1 && s.hostKeysOfHost(other.hostId).length === 1);
  }
  return { fast, slow, seeded, slug };
}
const send = (relay: TestRelay, p: { seeded: Seeded; slug: string }) =>
  viaRelay(relay, '/vendor-a/v1/chat/completions', p.seeded.relayKey, { model: p.slug, messages: [{ role: 'user', content: 'hi' }] });

t.test('lowest-latency: after each binding was measured once (two requests), every request goes to the fast one', async (t) => {
  const p = await pair('lowest-latency', 250);
  for (let i = 0; i < 2; i++) t.equal((await send(a, p)).status, 200);
  t.equal(p.slow.count, 1, 'the first two requests measured each binding once');
  t.equal(p.fast.count, 1);
  for (let i = 0; i < 10; i++) t.equal((await send(a, p)).status, 200);
  t.equal(p.slow.count, 1, 'no more requests to the slow binding');
  t.equal(p.fast.count, 11);

  // Instance B never measured these bindings: through Valkey it knows which is slow.
  await new Promise((r) => setTimeout(r, 2_200));
  for (let i = 0; i < 5; i++) t.equal((await send(b, p)).status, 200);
  t.equal(p.slow.count, 1, 'B sends nothing to the binding A measured slow');
  t.equal(p.fast.count, 16);
});

t.test('the weighted default is unchanged: both bindings get traffic', async (t) => {
  const p = await pair('weighted', 50);
  for (let i = 0; i < 16; i++) t.equal((await send(a, p)).status, 200);
  t.ok(p.slow.count > 0 && p.fast.count > 0, `both used (${p.fast.count}/${p.slow.count})`);
});

t.test("a key's cooldown keeps precedence over the strategy", async (t) => {
  const p = await pair('lowest-latency', 150);
  for (let i = 0; i < 3; i++) await send(a, p);
  const slowBefore = p.slow.count;
  const fastBefore = p.fast.count;
  // The fast binding's only key is rate-limited: the request fails over, and the next ones avoid it.
  p.fast.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 30 }));
  for (let i = 0; i < 3; i++) t.equal((await send(a, p)).status, 200);
  t.equal(p.fast.count - fastBefore, 1, 'the cooling key was asked once, before it cooled');
  t.equal(p.slow.count - slowBefore, 3, 'the slow binding serves while the fast one cools');
});

t.test('least-in-flight spreads concurrent requests evenly over two bindings', async (t) => {
  const p = await pair('least-in-flight', 400, 400);
  const answers = await Promise.all(Array.from({ length: 6 }, () => send(a, p)));
  for (const res of answers) t.equal(res.status, 200);
  t.equal(p.fast.count, 3, 'three on one');
  t.equal(p.slow.count, 3, 'three on the other');
});

t.test('balancing is checked on write', async (t) => {
  const p = await pair('weighted', 0);
  const bad = await a.api('PUT', `/api/models/by-id/${p.seeded.modelId}`, { spec: { balancing: 'fastest' } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /balancing/);
});
