// A provider must name a vendor adapter a loaded plugin provides (issue 38 #16): the settings
// endpoints refuse a backend that is not loaded, and so do the provider routes.
import t from 'tap';
import { client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });

t.test('creating a provider with an adapter no plugin provides is a 400 listing the loaded adapters', async (t) => {
  for (const adapter of ['nonexistent', 'gemini']) {
    const res = await api('POST', '/api/providers', { metadata: { displayName: `Uses ${adapter}` }, spec: { adapter } });
    t.equal(res.status, 400, `${adapter} is refused`);
    t.equal(res.json.error.code, 'RELAY_ERR_ADAPTER_NOT_LOADED');
    t.equal(res.json.error.field, '/spec/adapter');
    t.match(res.json.error.message, `"${adapter}"`, 'the message names the refused adapter');
    t.match(res.json.error.message, /loaded adapters: anthropic, openai$/, 'and the loaded ones');
  }
  const list = await api('GET', '/api/providers');
  t.same(list.json.items, [], 'nothing was stored');
  const ok = await api('POST', '/api/providers', { metadata: { displayName: 'OpenAI' }, spec: { adapter: 'openai' } });
  t.equal(ok.status, 201, 'a loaded adapter is accepted');
});

t.test('switching a provider to an adapter that is not loaded is refused; other edits are not', async (t) => {
  const made = await api('POST', '/api/providers', { metadata: { displayName: 'Anthropic' }, spec: { adapter: 'anthropic' } });
  const id = made.json.metadata.id;
  const res = await api('PUT', `/api/providers/by-id/${id}`, { spec: { adapter: 'gemini' } });
  t.equal(res.status, 400);
  t.equal(res.json.error.code, 'RELAY_ERR_ADAPTER_NOT_LOADED');
  t.equal((await api('GET', `/api/providers/${id}`)).json.spec.adapter, 'anthropic', 'the stored adapter is unchanged');

  // A provider stored while another instance (or an earlier config) loaded its adapter can still be renamed.
  const stale = await relay.store.create('providers', { displayName: 'Served elsewhere' }, { adapter: 'gemini' });
  const renamed = await api('PUT', `/api/providers/by-id/${stale.metadata.id}`, { metadata: { displayName: 'Served elsewhere, renamed' } });
  t.equal(renamed.status, 200, renamed.text);
  t.equal(renamed.json.spec.adapter, 'gemini');
});
