// Policy tiers (DESIGN: `relay` grants models to relay keys; `host` limits what a host key
// serves). Written through the API: a key must name a policy of its own tier, and a policy's tier
// cannot change while keys name it. Served: a host key with a host-tier policy serves only the
// models it grants; rows written before the checks (a host key naming a relay-tier policy, a relay
// key naming a host-tier one) are not honoured.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const must = async (method: string, path: string, body?: unknown): Promise<any> => {
  const res = await relay.api<any>(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const infer = (relayKey: string, model: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', relayKey, chat(model));

// Two models on one host with one key.
const a = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'tier-a', hostKeys: ['sk-tier-key'], policy: { modelIds: '*' } });
await must('POST', '/api/models', { metadata: { displayName: 'tier-b', slug: 'tier-b' }, spec: { bindings: [{ hostId: a.hostId, upstreamModel: 'tier-b' }] } });
const hostTierOnlyA = await must('POST', '/api/policies', { metadata: { displayName: 'host tier, model a' }, spec: { tier: 'host', modelIds: [a.modelId] } });
const [hostKeyId] = a.hostKeyIds as [string];

/** Writes a spec field straight into the database, as a Relay before these checks could have, and waits for the snapshot. */
async function writeBehindTheApi(kind: 'host-keys' | 'relay-keys', id: string, field: string, value: string): Promise<void> {
  await relay.relay.db.query(`UPDATE catalog_entities SET spec = jsonb_set(spec, $2, to_jsonb($3::text)), revision = nextval('catalog_revision') WHERE id = $1`, [id, `{${field}}`, value]);
  await relay.relay.sync.refresh(kind, id);
}

t.test('a key must name a policy of its own tier', async (t) => {
  const relayKeyOnHostTier = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: 'x' }, spec: { policyId: hostTierOnlyA.metadata.id } });
  t.equal(relayKeyOnHostTier.status, 400);
  t.equal(relayKeyOnHostTier.body.error.field, '/spec/policyId');
  t.match(relayKeyOnHostTier.body.error.message, /host-tier policy; a relay key needs a relay-tier one/);
  const hostKeyOnRelayTier = await relay.api<any>('PUT', `/api/host-keys/by-id/${hostKeyId}`, { spec: { policyId: a.policyId } });
  t.equal(hostKeyOnRelayTier.status, 400);
  t.equal(hostKeyOnRelayTier.body.error.field, '/spec/policyId');
});

t.test('a host-tier policy limits the models its host key serves', async (t) => {
  await must('PUT', `/api/host-keys/by-id/${hostKeyId}`, { spec: { policyId: hostTierOnlyA.metadata.id } });
  await settled(relay, (s) => s.hostKeys.get(hostKeyId)?.spec.policyId === hostTierOnlyA.metadata.id);
  t.equal((await infer(a.relayKey, 'tier-a')).status, 200, 'granted model');
  const other = await infer(a.relayKey, 'tier-b');
  t.equal(other.status, 404, 'no host key may serve the other model: configuration, as for a model with no usable binding');
  t.match(JSON.parse(other.text).error, { code: 'RELAY_ERR_NO_USABLE_HOST_KEY', message: /the host-tier policy of every host key of host `[^`]+` excludes the model/ });
});

t.test("a policy's tier cannot change while keys name it", async (t) => {
  const change = await relay.api<any>('PUT', `/api/policies/by-id/${hostTierOnlyA.metadata.id}`, { spec: { tier: 'relay' } });
  t.equal(change.status, 409);
  t.equal(change.body.error.field, '/spec/tier');
  const unused = await must('POST', '/api/policies', { metadata: { displayName: 'unused' }, spec: { tier: 'host', modelIds: '*' } });
  t.equal((await relay.api('PUT', `/api/policies/by-id/${unused.metadata.id}`, { spec: { tier: 'relay' } })).status, 200, 'an unused one can');
});

t.test('rows written before the checks are not honoured', async (t) => {
  // A host key naming a relay-tier policy is not used at all.
  await writeBehindTheApi('host-keys', hostKeyId, 'policyId', a.policyId);
  await settled(relay, (s) => s.hostKeys.get(hostKeyId)?.spec.policyId === a.policyId);
  const unused = await infer(a.relayKey, 'tier-a');
  t.equal(unused.status, 404);
  t.match(JSON.parse(unused.text).error, { code: 'RELAY_ERR_NO_USABLE_HOST_KEY', message: /excludes the model/ });
  // A relay key naming a host-tier policy is refused.
  await writeBehindTheApi('relay-keys', a.relayKeyId, 'policyId', hostTierOnlyA.metadata.id);
  await settled(relay, (s) => s.relayKeys.get(a.relayKeyId)?.spec.policyId === hostTierOnlyA.metadata.id);
  const got = await infer(a.relayKey, 'tier-a');
  t.equal(got.status, 401);
  t.match(JSON.parse(got.text).error.message, /not a relay-tier policy/);
});
