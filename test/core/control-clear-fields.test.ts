// A partial update merges into the stored spec, so a field left out keeps its value; null is how
// a field the spec may leave out is cleared (a model's context window, a host key's policy, a
// pricing's host). A field the spec requires cannot be nulled; one whose schema allows null
// (a relay key's expiresAt) keeps null.
import t from 'tap';
import { client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });
async function create(kind: string, spec: Record<string, unknown>) {
  const res = await api('POST', `/api/${kind}`, { metadata: { displayName: `${kind} ${Math.random()}` }, spec });
  if (res.status !== 201) throw new Error(`${kind}: ${res.status} ${res.text}`);
  return res.json;
}
const put = (kind: string, id: string, spec: Record<string, unknown>) => api('PUT', `/api/${kind}/by-id/${id}`, { spec });

const provider = await create('providers', { adapter: 'openai', shapes: ['openai.chat'] });
const host = await create('hosts', { providerId: provider.metadata.id, baseUrl: 'https://example.test/v1', headers: { 'x-team': 'a' } });
const model = await create('models', { contextWindow: 128000, description: 'fast', bindings: [{ hostId: host.metadata.id, upstreamModel: 'm' }] });
const hostPolicy = await create('policies', { tier: 'host', modelIds: '*' });

t.test('null clears an optional field; leaving it out keeps it', async (t) => {
  const kept = await put('models', model.metadata.id, { description: 'still fast' });
  t.equal(kept.json.spec.contextWindow, 128000, 'left out: kept');
  const cleared = await put('models', model.metadata.id, { contextWindow: null });
  t.equal(cleared.status, 200);
  t.notOk('contextWindow' in cleared.json.spec, 'null: cleared');
  t.equal(cleared.json.spec.description, 'still fast');
  t.notOk('headers' in (await put('hosts', host.metadata.id, { headers: null })).json.spec, 'a host without its extra headers');
  t.notOk('shapes' in (await put('providers', provider.metadata.id, { shapes: null })).json.spec, 'a provider back to every shape');
});

t.test("a host key's policy and a pricing's host can be cleared", async (t) => {
  const key = await create('host-keys', { hostId: host.metadata.id, valueFrom: { kind: 'env', env: 'VENDOR_KEY' }, policyId: hostPolicy.metadata.id });
  const unrestricted = await put('host-keys', key.metadata.id, { policyId: null });
  t.equal(unrestricted.status, 200);
  t.notOk('policyId' in unrestricted.json.spec);
  const modelWide = await create('pricings', { modelId: model.metadata.id, inputPerMillion: 1, outputPerMillion: 2 });
  const onHost = await create('pricings', { modelId: model.metadata.id, hostId: host.metadata.id, inputPerMillion: 1, outputPerMillion: 2 });
  const clash = await put('pricings', onHost.metadata.id, { hostId: null });
  t.equal(clash.status, 409, 'clearing the host makes it a second model-wide pricing');
  t.match(clash.json.error.message, modelWide.metadata.slug);
});

t.test('a required field cannot be nulled; a nullable one keeps null', async (t) => {
  const required = await put('hosts', host.metadata.id, { providerId: null });
  t.equal(required.status, 400);
  t.equal(required.json.error.field, '/spec/providerId');
  const policy = await create('policies', { tier: 'relay', modelIds: '*' });
  const key = await api('POST', '/api/relay-keys', { metadata: { displayName: 'k' }, spec: { policyId: policy.metadata.id, expiresAt: '2099-01-01T00:00:00Z' } });
  const noExpiry = await put('relay-keys', key.json.relayKey.metadata.id, { expiresAt: null });
  t.equal(noExpiry.status, 200);
  t.equal(noExpiry.json.spec.expiresAt, null);
});

t.test('a rate limit keeps at least one limit', async (t) => {
  const empty = await api('POST', '/api/rate-limits', { metadata: { displayName: 'nothing' }, spec: {} });
  t.equal(empty.status, 400);
  t.equal(empty.json.error.field, '/spec');
  t.match(empty.json.error.message, /at least one of requestsPerMinute/);
  const limit = await create('rate-limits', { requestsPerMinute: 60, tokensPerMinute: 1000 });
  t.equal((await put('rate-limits', limit.metadata.id, { tokensPerMinute: null })).status, 200, 'one of two cleared');
  t.equal((await put('rate-limits', limit.metadata.id, { requestsPerMinute: null })).status, 400, 'not the last one');
});
