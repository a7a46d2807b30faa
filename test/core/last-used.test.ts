// When each relay key was last accepted (GET /api/relay-keys/last-used): set by an accepted
// request, not by a refused one; never used keys first; shared by instances on one database; a
// use is not a catalog change; a write that fails is kept for the next flush. When each host key
// was last sent upstream (GET /api/host-keys/last-used): set by every request sent with it, one
// the upstream refused included, and by nothing Relay refused before sending.
import t from 'tap';
import pino from 'pino';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { LastUsed } from '../../core/pipeline/last-used.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay } from '../support/relay-client.ts';

interface RelayKeyUse { relayKeyId: string; lastUsedAt: string | null }
interface HostKeyUse { hostKeyId: string; lastUsedAt: string | null }

t.test('relay keys: last used', async (t) => {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const relay = await startRelay({});
  t.teardown(() => relay.close());
  const used = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'last-used-gpt' });
  const idle = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'last-used-gpt' });
  const disabled = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'last-used-gpt', relayKey: { enabled: false } });
  const lastUsed = async (r = relay): Promise<Map<string, string | null>> => {
    const res = await r.api('GET', '/api/relay-keys/last-used');
    t.equal(res.status, 200);
    return new Map((res.body.items as RelayKeyUse[]).map((i) => [i.relayKeyId, i.lastUsedAt]));
  };
  const ask = (key: string, r = relay) => viaRelay(r, '/vendor-a/v1/chat/completions', key, { model: 'last-used-gpt', messages: [{ role: 'user', content: 'hi' }] });

  t.same([...(await lastUsed()).values()], [null, null, null], 'no key used yet');
  const before = (await relay.api('GET', `/api/relay-keys/${used.relayKeyId}`)).body.metadata;
  const from = Date.now();
  t.equal((await ask(used.relayKey)).status, 200);
  t.equal((await ask(disabled.relayKey)).status, 401, 'a disabled key is refused');
  t.equal((await ask('rk_not_a_key_at_all')).status, 401);
  const to = Date.now();

  const seen = await lastUsed();
  const at = Date.parse(seen.get(used.relayKeyId)!);
  t.ok(at >= from - 1_000 && at <= to + 1_000, 'the accepted key has the time of its request');
  t.equal(seen.get(idle.relayKeyId), null, 'an unused key has none');
  t.equal(seen.get(disabled.relayKeyId), null, 'a refused key is not a use');
  const res = await relay.api('GET', '/api/relay-keys/last-used');
  t.equal((res.body.items as RelayKeyUse[]).at(-1)!.relayKeyId, used.relayKeyId, 'the most recently used last');
  t.same((await relay.api('GET', `/api/relay-keys/${used.relayKeyId}`)).body.metadata, before, "a use does not change the key's metadata (updatedAt included)");

  await t.test('another instance on the same database sees the use once it wrote it', { skip: relay.databaseUrl === null ? 'the embedded database has one instance' : false }, async (t) => {
    const second = await startRelay({ database: relay.databaseUrl!, masterKey: relay.masterKey });
    const start = Date.now();
    t.equal((await ask(idle.relayKey, second)).status, 200);
    await second.close(); // writes what it noted
    const after = await lastUsed();
    t.ok(Date.parse(after.get(idle.relayKeyId)!) >= start - 1_000, "the second instance's use");
    t.equal(after.get(used.relayKeyId), seen.get(used.relayKeyId), "the first instance's own stays");
  });

  t.test('"last-used" is no slug for a relay key: it is a path of the API', async (t) => {
    const res = await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'x', slug: 'last-used' }, spec: { policyId: used.policyId } });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /reserved/);
  });

  t.test('a write that fails is kept and written by the next flush', async (t) => {
    const db = relay.relay.db;
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(line); } });
    const tracker = new LastUsed(db, log, 'relay-keys', 3_600_000);
    t.teardown(() => tracker.close());
    await db.query('ALTER TABLE relay_key_last_used RENAME TO relay_key_last_used_away');
    tracker.note(idle.relayKeyId);
    await tracker.flush();
    t.match(warnings.join(''), /could not record when relay keys were last used/, 'the failure is logged');
    await db.query('ALTER TABLE relay_key_last_used_away RENAME TO relay_key_last_used');
    await tracker.flush();
    const { rows } = await db.query<{ last_used_at: Date }>('SELECT last_used_at FROM relay_key_last_used WHERE relay_key_id = $1', [idle.relayKeyId]);
    t.ok(Date.now() - new Date(rows[0]!.last_used_at).getTime() < 60_000, 'written by the next flush');
  });
});

t.test('host keys: last used', async (t) => {
  const up = await startFakeUpstream({ apiKey: 'sk-accepted' });
  t.teardown(() => up.close());
  const relay = await startRelay({});
  t.teardown(() => relay.close());
  const used = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'host-key-used', hostKeys: ['sk-accepted'] });
  const refused = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'host-key-refused', hostKeys: ['sk-refused-upstream'] });
  const idle = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'host-key-idle', hostKeys: ['sk-accepted'] });
  const lastUsed = async (): Promise<Map<string, string | null>> => {
    const res = await relay.api('GET', '/api/host-keys/last-used');
    t.equal(res.status, 200);
    return new Map((res.body.items as HostKeyUse[]).map((i) => [i.hostKeyId, i.lastUsedAt]));
  };
  const ask = (key: string, model: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'hi' }] });

  t.same([...(await lastUsed()).values()], [null, null, null], 'no host key used yet');
  const from = Date.now();
  t.equal((await ask(used.relayKey, 'host-key-used')).status, 200);
  t.equal((await ask(refused.relayKey, 'host-key-refused')).status, 502, 'the upstream refuses the key: Relay answers 502');
  t.equal((await ask('rk_not_a_key_at_all', 'host-key-idle')).status, 401, 'a request without a valid relay key sends nothing');
  t.equal((await ask(used.relayKey, 'host-key-idle')).status, 403, 'a model the policy does not grant sends nothing');
  const to = Date.now();

  const seen = await lastUsed();
  for (const [what, id] of [['the accepted key', used.hostKeyIds[0]], ['the key the upstream refused (it was sent)', refused.hostKeyIds[0]]] as const) {
    const at = Date.parse(seen.get(id)!);
    t.ok(at >= from - 1_000 && at <= to + 1_000, `${what} has the time of its request`);
  }
  t.equal(seen.get(idle.hostKeyIds[0]), null, 'a key no request was sent with has none');
  const res = await relay.api('GET', '/api/host-keys/last-used');
  t.equal((res.body.items as HostKeyUse[])[0]!.hostKeyId, idle.hostKeyIds[0], 'the never used key first');
  t.notOk(JSON.stringify(res.body).includes('sk-'), 'no host key value in the answer');

  t.test('"last-used" is no slug for a host key: it is a path of the API', async (t) => {
    const res = await relay.api('POST', '/api/host-keys', { metadata: { displayName: 'x', slug: 'last-used' }, spec: { hostId: idle.hostId, valueFrom: { kind: 'stored' }, value: 'sk-x' } });
    t.equal(res.status, 400);
    t.match(res.body.error.message, /reserved/);
  });
});
