// The model lists (Codex's models document, /vendor-a/v1/models) show every granted model that
// has an enabled key, whatever its key's momentary health: a key cooling down after an upstream
// 429 does not take its model out (SPEC: the document lists exactly the models the key's policy
// grants; Codex keeps the document it saved). A model whose only key is disabled is left out.
// The records of requests refused meanwhile still name the model.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay, seedRoute } from '../../core/testing.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { hostKeyHealth, routeLive, settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'list-model', policy: { modelIds: '*' } });
await routeLive(relay, seeded);
const [keyId] = seeded.hostKeyIds as [string];

async function listed(path: string): Promise<string[]> {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { headers: { authorization: `Bearer ${seeded.relayKey}` } });
  const body = await res.json() as { models?: Array<{ slug: string }>; data?: Array<{ id: string }> };
  return body.models ? body.models.map((m) => m.slug) : body.data!.map((m) => m.id);
}

t.test('a model whose key is cooling down stays listed', async (t) => {
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 60 }));
  const limited = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'list-model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(limited.status, 429);
  t.equal((await hostKeyHealth(relay)).get(keyId)?.state, 'cooling');
  t.same(await listed('/agent-a/v1/models'), ['list-model'], "Codex's models document");
  t.same(await listed('/vendor-a/v1/models'), ['list-model'], 'the OpenAI model list');
  // Meanwhile requests get a 429 (still the upstream's rate limit), and their records still name the model (per-model views).
  const refused = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'list-model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(refused.status, 429);
  t.match(await usageRecord(relay, refused.headers.get('x-request-id')!), { status: 429, model_id: seeded.modelId, model_slug: 'list-model' });
});

t.test('a model whose only key is disabled is left out', async (t) => {
  const res = await relay.api('PUT', `/api/host-keys/by-id/${keyId}`, { spec: { enabled: false } });
  t.equal(res.status, 200);
  await settled(relay, (s) => s.hostKeys.get(keyId)?.spec.enabled === false);
  t.same(await listed('/vendor-a/v1/models'), []);
});
