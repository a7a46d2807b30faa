// The control plane in the whole service (createRelay wiring): a rotated relay key is refused
// at the inference plane of two instances on one Postgres, and a dashboard session made on
// one is accepted by the other.
import t from 'tap';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { upsertAdminUser } from '../../core/control/index.ts';

const first = await startRelay();
const second = await startRelay({ database: first.databaseUrl!, masterKey: first.masterKey });
t.teardown(async () => {
  await second.close();
  await first.close();
});

const models = (base: string, key: string) => fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

t.test('rotating a relay key refuses the old secret on every instance at once', async (t) => {
  const seeded = await seedRoute(first, { baseUrl: 'http://127.0.0.1:9/v1', adapter: 'openai' });
  await eventually(async () => (await models(second.inferenceUrl, seeded.relayKey)) === 200, 2_000);
  t.equal(await models(first.inferenceUrl, seeded.relayKey), 200, 'the key works before');

  const rotated = await first.api('POST', `/api/relay-keys/by-id/${seeded.relayKeyId}/rotate`);
  t.equal(rotated.status, 200);
  const refusedAfter = await eventually(async () => (await models(first.inferenceUrl, seeded.relayKey)) === 401
    && (await models(second.inferenceUrl, seeded.relayKey)) === 401, 1_000);
  t.ok(refusedAfter < 1_000, `old key refused on both instances after ${refusedAfter} ms`);
  t.equal(await models(second.inferenceUrl, rotated.body.plaintext), 200, 'the new key works');

  const disabled = await first.api('PUT', `/api/relay-keys/by-id/${seeded.relayKeyId}`, { spec: { enabled: false } });
  t.equal(disabled.status, 200);
  await eventually(async () => (await models(second.inferenceUrl, rotated.body.plaintext)) === 401, 1_000);
  t.pass('a disabled key is refused');
});

t.test('a session from one instance works on the other', async (t) => {
  await upsertAdminUser(first.relay.db, 'ops', 'a long enough password');
  const login = await fetch(`${first.controlUrl}/api/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ops', password: 'a long enough password' }),
  });
  t.equal(login.status, 200);
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  const whoami = await fetch(`${second.controlUrl}/api/auth/whoami`, { headers: { cookie } });
  t.same(await whoami.json(), { kind: 'user', username: 'ops', role: 'admin' });
  const config = await fetch(`${second.controlUrl}/config.json`, { headers: { cookie } }).then((r) => r.json() as Promise<{ plugins: Array<{ name: string; source: string }>; backends: { usage: string[] }; adapters: string[] }>);
  t.ok(config.plugins.some((p: { name: string; source: string }) => p.name === 'wire-vendor-a' && p.source === 'builtin'));
  t.ok(config.backends.usage.includes('file'));
  t.same(config.adapters, ['anthropic', 'openai'], 'the vendor adapters this instance loaded');
  const openapi = await second.api('GET', '/api/openapi.json');
  t.equal(openapi.status, 200);
  t.ok(openapi.body.paths['/api/logs'].get.security, 'plugin and observer routes carry security too');
});
