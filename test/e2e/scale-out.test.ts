// Three Relay instances as real processes sharing one deployment (one Postgres database, one
// Valkey/Redis database, one master key and admin token), and one fake upstream:
//  - a catalog change made through A is served by B and C within 1 s (Postgres NOTIFY);
//  - a relay-side rate limit counts requests spread over the three (Valkey);
//  - a dashboard session created on A is accepted by B and C (sessions live in Postgres);
//  - an instance stopped with SIGTERM right after its responses loses none of their usage
//    events: each is readable through another instance (usage backend postgres, shared);
//  - one killed with SIGKILL 500 ms after its responses loses none either (the queue writes within 100 ms).
// What SIGKILL can lose (the last 100 ms of usage events) is in examples/deploy/README.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, seedRoute, type Seeded, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { post, type Answer } from '../support/relay-client.ts';
import { startRelayProcess, type RelayProcess } from '../support/relay-process.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/11';
const ADMIN = { username: 'ops', password: `pw-${randomBytes(9).toString('base64url')}` };

const redis = new Redis(REDIS_URL);
await redis.flushdb();
await redis.quit();
const db = await createTestDatabase();
const upstream = await startFakeUpstream({ chunks: 3 });
const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-scale-out-'));
const configFile = path.join(dir, 'relay.yaml');
writeFileSync(configFile, [
  'server: { host: 127.0.0.1, drainTimeoutMs: 10000 }',
  'log: { level: warn }',
  'plugins:',
  '  - use: auth-bearer',
  '  - use: wire-vendor-a',
  '  - use: vendor-openai',
  '  - use: log-file',
  '  - use: log-postgres',
  '',
].join('\n'));

const shared = {
  DATABASE_URL: db.url, VALKEY_URL: REDIS_URL, RELAY_MASTER_KEY: generateMasterKey(),
  RELAY_ADMIN_USERNAME: ADMIN.username, RELAY_ADMIN_PASSWORD: ADMIN.password,
};
const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
const instances: RelayProcess[] = [];
t.teardown(async () => {
  await Promise.all(instances.map((i) => i.dispose()));
  await upstream.close();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const start = async (name: string): Promise<RelayProcess> => {
  const proc = await startRelayProcess({ name, configFile, adminToken, env: shared });
  instances.push(proc);
  return proc;
};
// A first (it migrates the database and creates the first dashboard user), then B and C.
const a = await start('a');
const [b, c] = await Promise.all([start('b'), start('c')]);

/** seedRoute only needs the admin API. */
const viaAdminOf = (proc: RelayProcess) => ({ api: proc.api }) as unknown as TestRelay;

const chat = (on: RelayProcess, s: Seeded, stream = false): Promise<Answer> =>
  post(`${on.inferenceUrl}/vendor-a/v1/chat/completions`, { authorization: `Bearer ${s.relayKey}` }, { model: s.modelSlug, stream, messages: [{ role: 'user', content: 'hi' }] });

/** True once the instance's snapshot has the key and its model (no inference request, so no rate-limit permit is used). */
async function knows(on: RelayProcess, s: Seeded): Promise<boolean> {
  const res = await fetch(`${on.inferenceUrl}/vendor-a/v1/models`, { headers: { authorization: `Bearer ${s.relayKey}` } });
  if (res.status !== 200) return false;
  const body = await res.json() as { data: Array<{ id: string }> };
  return body.data.some((m) => m.id === s.modelSlug);
}

t.test('a catalog change made through A is served by B and C within 1 s', async (t) => {
  const s = await seedRoute(viaAdminOf(a), { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'scale-model' });
  const created = Date.now();
  const servedAfter = await Promise.all([b, c].map(async (on) => {
    await eventually(async () => (await chat(on, s)).status === 200, 5_000, 20);
    return Date.now() - created;
  }));
  for (const [i, ms] of servedAfter.entries()) t.ok(ms < 1_000, `${['B', 'C'][i]} served the new relay key after ${ms} ms`);
  t.equal((await chat(a, s)).status, 200, 'and A too');
});

t.test('a relay-side rate limit is enforced across the three', async (t) => {
  const limit = await a.api('POST', '/api/rate-limits', { metadata: { displayName: 'shared rpm' }, spec: { requestsPerMinute: 4 } });
  t.equal(limit.status, 201);
  const s = await seedRoute(viaAdminOf(a), { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'limited-model', policy: { rateLimitIds: [limit.body.metadata.id] } });
  await eventually(async () => (await Promise.all([a, b, c].map((on) => knows(on, s)))).every(Boolean), 5_000, 25);
  // Per-minute limits count in fixed one-minute windows: start the burst well inside one.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 8_000) await new Promise((r) => setTimeout(r, left + 100));

  const spread = [a, b, c, a];
  for (const [i, on] of spread.entries()) t.equal((await chat(on, s)).status, 200, `request ${i + 1} (on ${on.name.toUpperCase()}) is within the limit`);
  for (const on of [b, c, a]) {
    const limited = await chat(on, s);
    t.equal(limited.status, 429, `the next request on ${on.name.toUpperCase()} is limited`);
    t.match(JSON.parse(limited.text).error, { code: 'RELAY_ERR_RATE_LIMITED', message: /requests per minute \(4\)/ });
  }
});

t.test('a session created on A is accepted by B and C', async (t) => {
  const login = await fetch(`${a.controlUrl}/api/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN),
  });
  t.equal(login.status, 200, 'the first dashboard user came from RELAY_ADMIN_USERNAME/PASSWORD');
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('relay_session='))!.split(';')[0]!;
  for (const on of [b, c, a]) {
    const res = await fetch(`${on.controlUrl}/api/auth/whoami`, { headers: { cookie } });
    t.equal(res.status, 200, `whoami on ${on.name.toUpperCase()}`);
    t.same(await res.json(), { kind: 'user', username: ADMIN.username, role: 'admin' });
  }
  const anonymous = await fetch(`${b.controlUrl}/api/auth/whoami`);
  t.equal(anonymous.status, 401, 'without the cookie: 401');
});

t.test('SIGTERM right after its responses: no acknowledged usage event is lost', async (t) => {
  const put = await a.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' });
  t.equal(put.status, 200);
  await eventually(async () => {
    const all = await Promise.all([a, b, c].map((on) => on.api('GET', '/api/settings/usage-logging')));
    return all.every((r) => r.body?.backend === 'postgres');
  }, 5_000, 25);
  const s = await seedRoute(viaAdminOf(a), { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'drain-model' });
  await eventually(async () => knows(c, s), 5_000, 25);

  const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => chat(c, s, i % 2 === 1)));
  t.ok(answers.every((r) => r.status === 200), 'every request answered 200 (half of them streamed)');
  const ids = answers.map((r) => r.headers.get('x-request-id')!);
  // The shared queue writes in batches every second: these events are still in C's memory now.
  t.equal(await c.stop('SIGTERM'), 0, 'C drains, flushes and exits 0');

  const missing: string[] = [];
  for (const id of ids) if ((await b.api('GET', `/api/logs/${id}`)).status !== 200) missing.push(id);
  t.same(missing, [], `all ${ids.length} events are readable through B as soon as C has exited`);
  const one = await a.api('GET', `/api/logs/${ids[0]}`);
  t.match(one.body, { request_id: ids[0], status: 200, model_slug: 'drain-model' }, 'and through A');
});

t.test('SIGKILL loses at most the last 100 ms: the events of requests answered before that are written', async (t) => {
  const s = await seedRoute(viaAdminOf(a), { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'kill-model' });
  await eventually(async () => knows(a, s), 5_000, 25);
  const answers = await Promise.all(Array.from({ length: 6 }, () => chat(a, s)));
  t.ok(answers.every((r) => r.status === 200));
  // The usage queue writes within 100 ms of an event; the rest of the pause is the write itself.
  await new Promise((r) => setTimeout(r, 500));
  await a.stop('SIGKILL');
  const ids = answers.map((r) => r.headers.get('x-request-id')!);
  const missing: string[] = [];
  for (const id of ids) if ((await b.api('GET', `/api/logs/${id}`)).status !== 200) missing.push(id);
  t.same(missing, [], `all ${ids.length} answered requests have their usage event after SIGKILL`);
});
