// Host-key health shared between instances through Redis (DESIGN.md "Health and states"): what
// one instance learns from an upstream (a key rate-limited, a host's circuit open or closed again),
// every instance uses; what only concerns one instance (it cannot open a key's value) stays with it.
import t from 'tap';
import { Redis } from 'ioredis';
import { startRelay, seedRoute, createTestDatabase, eventually } from '../../core/testing.ts';
import { startFakeUpstream, faults } from '../support/fake-upstream.ts';
import { viaRelay, hostKeyHealth, settled } from '../support/relay-client.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/14';
const redis = new Redis(REDIS_URL);
await redis.flushdb();
await redis.quit();

const db = await createTestDatabase();
const config = { valkey: { url: REDIS_URL }, health: { circuitBreaker: { failures: 2, windowMs: 10_000, openMs: 5_000 } } };
const a = await startRelay({ database: db.url, config });
const b = await startRelay({ database: db.url, config, masterKey: a.masterKey });
const up = await startFakeUpstream();
t.teardown(async () => {
  await a.close();
  await b.close();
  await up.close();
  await db.drop();
});

const keys = ['sk-shared-one', 'sk-shared-two'];
const s = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'shared', hostKeys: keys });
for (const relay of [a, b]) await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length === 2);
const chat = { model: 'shared', messages: [{ role: 'user', content: 'hi' }] };
const bearer = (i: number) => String(up.requests[i]!.headers.authorization).replace(/^Bearer /, '');

t.test('a key that cools down on one instance is skipped by the other', async (t) => {
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 30 }));
  t.equal((await viaRelay(a, '/vendor-a/v1/chat/completions', s.relayKey, chat)).status, 200, 'A fails over');
  const cooled = bearer(0);
  const cooledId = s.hostKeyIds[keys.indexOf(cooled)]!;
  await eventually(async () => (await hostKeyHealth(b)).get(cooledId)?.state === 'cooling');
  const before = up.count;
  for (let i = 0; i < 3; i++) t.equal((await viaRelay(b, '/vendor-a/v1/chat/completions', s.relayKey, chat)).status, 200);
  t.equal(up.count, before + 3, 'one attempt each');
  for (let i = before; i < up.count; i++) t.not(bearer(i), cooled, 'B never uses the key A saw rate-limited');
});

t.test('an instance that cannot open a key marks it for itself only', async (t) => {
  // C runs with another master key: the stored host-key values do not open there.
  const c = await startRelay({ database: db.url, config });
  t.teardown(() => c.close());
  await settled(c, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length === 2);
  const got = await viaRelay(c, '/vendor-a/v1/chat/completions', s.relayKey, chat);
  t.equal(got.status, 503, 'C has no usable key');
  t.notMatch(got.text, /sk-shared/, 'no secret in the error');
  const onC = await hostKeyHealth(c);
  // The key A saw rate-limited is already cooling on C (C loaded the shared marks at start);
  // every other key is one C could not open.
  for (const id of s.hostKeyIds) t.ok(['invalid', 'cooling'].includes(onC.get(id)?.state ?? ''), 'C marks the keys it cannot open');
  t.ok(s.hostKeyIds.some((id) => onC.get(id)?.state === 'invalid'), 'at least one is invalid on C');
  await new Promise((r) => setTimeout(r, 200)); // time for a (wrong) broadcast to arrive
  const onA = await hostKeyHealth(a);
  t.equal(onA.get(s.hostKeyIds.find((id) => onA.get(id)?.state !== 'cooling')!)?.state, 'healthy', "A's usable key stays healthy");
  for (const id of s.hostKeyIds) t.not(onA.get(id)?.state, 'invalid', 'A does not take over C\'s local problem');
  t.equal((await viaRelay(a, '/vendor-a/v1/chat/completions', s.relayKey, chat)).status, 200, 'A still serves');
});

t.test('an instance that starts after a key cooled down knows it', async (t) => {
  const lateKeys = ['sk-late-one', 'sk-late-two'];
  const r = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'shared-late', hostKeys: lateKeys });
  await settled(a, (snap) => snap.relayKeys.has(r.relayKeyId) && snap.hostKeysOfHost(r.hostId).length === 2);
  up.reset();
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 60 }));
  t.equal((await viaRelay(a, '/vendor-a/v1/chat/completions', r.relayKey, { ...chat, model: 'shared-late' })).status, 200, 'A fails over');
  const cooled = r.hostKeyIds[lateKeys.indexOf(bearer(0))]!;
  await eventually(async () => (await hostKeyHealth(a)).get(cooled)?.state === 'cooling');
  const late = await startRelay({ database: db.url, config, masterKey: a.masterKey });
  t.teardown(() => late.close());
  t.equal((await hostKeyHealth(late)).get(cooled)?.state, 'cooling', 'the late instance starts with the mark');
});

t.test("a circuit opened on one instance is open on the others, and one's successful probe closes it on all", async (t) => {
  const failing = await startFakeUpstream();
  t.teardown(() => failing.close());
  failing.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  const r = await seedRoute(a, { baseUrl: `${failing.url}/v1`, adapter: 'openai', model: 'shared-circuit', hostKeys: ['sk-circuit'] });
  for (const relay of [a, b]) await settled(relay, (snap) => snap.relayKeys.has(r.relayKeyId) && snap.hostKeysOfHost(r.hostId).length === 1);
  const [id] = r.hostKeyIds as [string];
  const body = { ...chat, model: 'shared-circuit' };
  const path = '/vendor-a/v1/chat/completions';
  for (let i = 0; i < 2; i++) t.equal((await viaRelay(a, path, r.relayKey, body)).status, 500, "A passes the upstream's 500 on");
  t.equal((await hostKeyHealth(a)).get(id)?.state, 'open', 'two failures in a row open the circuit on A');
  await eventually(async () => (await hostKeyHealth(b)).get(id)?.state === 'open');
  const onB = await viaRelay(b, path, r.relayKey, body);
  t.equal(onB.status, 503, 'B refuses too');
  t.match(JSON.parse(onB.text).error.message, /circuit open/);
  t.equal(failing.count, 2, 'B sent nothing to the failing host');
  const late = await startRelay({ database: db.url, config, masterKey: a.masterKey });
  t.teardown(() => late.close());
  t.equal((await hostKeyHealth(late)).get(id)?.state, 'open', 'an instance that starts meanwhile loads the open circuit');

  failing.script(undefined); // the upstream recovers
  await eventually(async () => (await hostKeyHealth(b)).get(id)?.state === 'half-open', 8_000, 50);
  t.equal((await viaRelay(b, path, r.relayKey, body)).status, 200, "B's probe is served");
  t.equal((await hostKeyHealth(b)).get(id)?.state, 'healthy', 'the probe closed the circuit on B');
  await eventually(async () => (await hostKeyHealth(a)).get(id)?.state === 'healthy');
  const seen = failing.count;
  t.equal((await viaRelay(a, path, r.relayKey, body)).status, 200, 'A serves again');
  t.equal(failing.count, seen + 1);
});
