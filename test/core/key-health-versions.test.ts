// A host key's health marks are about one version of it (an operator's edit makes a new one): a
// request sent with the version before the edit that ends after it must not clear, replace or set
// the marks of the version in use since. Through real HTTP: a Relay (without Valkey, and with it,
// where marks are also stored and published), a fake upstream that holds the old value's request
// until told to answer, and the admin API's edit of the key's value.
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { startRelay, seedRoute, type Seeded, type TestRelay } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { faults, startFakeUpstream, type FakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { hostKeyHealth, routeLive, settled, viaRelay, type Answer } from '../support/relay-client.ts';

const VALKEY_URL = 'redis://127.0.0.1:6379';

interface Setup {
  relay: TestRelay;
  up: FakeUpstream;
  seeded: Seeded;
  keyId: string;
}

let seq = 0;
/** A model with one host key (its value `old`) on a fresh upstream. */
async function setUp(t: Test, relay: TestRelay, old: string): Promise<Setup> {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `versions-${++seq}`, hostKeys: [old] });
  await routeLive(relay, seeded);
  return { relay, up, seeded, keyId: seeded.hostKeyIds[0]! };
}

const chat = (s: Setup): Promise<Answer> =>
  viaRelay(s.relay, '/vendor-a/v1/chat/completions', s.seeded.relayKey, { model: s.seeded.modelSlug, messages: [{ role: 'user', content: 'hi' }] });

/**
 * Starts a request the upstream holds (it was sent with the key's value `old`), then edits the
 * key's value to `current` (a new version) once the upstream has it. Resolves with a function that
 * lets the upstream answer the held request with `heldAnswer` (undefined: the default success).
 */
async function heldAcrossEdit(s: Setup, old: string, current: string, currentAnswers: () => ScriptedAction | undefined, heldAnswer?: ScriptedAction) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  s.up.script(async (req) => {
    if (req.headers.authorization === `Bearer ${old}`) {
      await released;
      return heldAnswer;
    }
    return req.headers.authorization === `Bearer ${current}` ? currentAnswers() : undefined;
  });
  const before = s.relay.relay.sync.snapshot().hostKeys.get(s.keyId)!.metadata.updatedAt;
  const held = chat(s);
  await s.up.waitForRequests(1);
  const edited = await s.relay.api('PUT', `/api/host-keys/by-id/${s.keyId}`, { spec: { value: current } });
  if (edited.status !== 200) throw new Error(`editing the key: ${edited.status} ${JSON.stringify(edited.body)}`);
  await settled(s.relay, (snap) => snap.hostKeys.get(s.keyId)!.metadata.updatedAt !== before);
  return { held, answer: () => { release(); return held; } };
}

for (const valkey of [false, true]) {
  t.test(valkey ? 'with Valkey' : 'without Valkey', async (t) => {
    const relay = await startRelay({ config: valkey ? { valkey: { url: VALKEY_URL } } : {}, env: { VALKEY_URL: undefined } });
    const keyIds: string[] = [];
    t.teardown(async () => {
      await relay.close();
      if (!valkey || keyIds.length === 0) return;
      const redis = new Redis(VALKEY_URL, valkeyClientOptions());
      await waitForValkey(redis);
      await redis.del(...keyIds.map((id) => `relay:key-health:mark:${id}`));
      redis.disconnect();
    });
    const health = async (s: Setup) => (await hostKeyHealth(relay)).get(s.keyId)!;

    t.test('a success with the old version leaves the new version\'s invalid mark', async (t) => {
      const s = await setUp(t, relay, 'sk-old-a');
      keyIds.push(s.keyId);
      const edit = await heldAcrossEdit(s, 'sk-old-a', 'sk-new-a', () => faults.unauthorized());
      const refused = await chat(s);
      t.not(refused.status, 200, 'the new value is refused upstream');
      t.equal((await health(s)).state, 'invalid', 'the new version is marked invalid');
      const old = await edit.answer();
      t.equal(old.status, 200, 'the request sent with the old value succeeds');
      t.equal((await health(s)).state, 'invalid', 'the new version is still invalid');
      const sent = s.up.count;
      const next = await chat(s);
      t.not(next.status, 200, 'the next request is refused');
      t.equal(s.up.count, sent, 'without trying the invalid key');
    });

    t.test('a 401 with the old version neither replaces nor ends the new version\'s rate limit', async (t) => {
      const s = await setUp(t, relay, 'sk-old-b');
      keyIds.push(s.keyId);
      const edit = await heldAcrossEdit(s, 'sk-old-b', 'sk-new-b', () => faults.rateLimit({ vendor: 'openai', retryAfter: 60 }), faults.unauthorized());
      await chat(s);
      t.equal((await health(s)).state, 'cooling', 'the new version cools after its 429');
      const old = await edit.answer();
      t.not(old.status, 200, 'the request sent with the old value is refused upstream');
      const after = await health(s);
      t.equal(after.state, 'cooling', `the new version still cools (${JSON.stringify(after)})`);
      const sent = s.up.count;
      await chat(s);
      t.equal(s.up.count, sent, 'the next request does not try the cooling key');
    });

    t.test('a 401 with the old version leaves the new version usable', async (t) => {
      const s = await setUp(t, relay, 'sk-old-c');
      keyIds.push(s.keyId);
      const edit = await heldAcrossEdit(s, 'sk-old-c', 'sk-new-c', () => undefined, faults.unauthorized());
      t.equal((await chat(s)).status, 200, 'the new value works');
      t.not((await edit.answer()).status, 200, 'the request sent with the old value is refused upstream');
      t.equal((await health(s)).state, 'healthy', 'the new version is shown healthy');
      t.equal((await chat(s)).status, 200, 'and serves the next request');
    });
  });
}
