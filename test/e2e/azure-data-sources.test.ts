// Azure "On Your Data" searched with the Azure OpenAI resource's managed identity (SECURITY.md row
// 47): any caller of the host could have Azure search another team's index with the resource's own
// identity. A managed-identity data source passes only when the host's dataSourceEndpoints lists its
// endpoint; any other is a 400 that Azure never hears of. A source with its own key passes, and a
// body with data sources goes to Azure as Relay read it (a key written twice cannot mean two things).
import t, { type Test } from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';

const API_KEY = 'azure-key-datasources-0123456789';
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }] });
const azure = await startFakeAzure({ apiKey: API_KEY, deployments: { 'gpt-4o-prod': 'gpt-4o-2024-11-20' } });
t.teardown(async () => {
  await relay.close();
  await azure.close();
});

async function azureRoute(model: string, dataSourceEndpoints?: string[]): Promise<Seeded> {
  const route = await seedRoute(relay, {
    baseUrl: azure.url, adapter: 'azure-openai', model, upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY],
    ...(dataSourceEndpoints ? { hostOptions: { dataSourceEndpoints } } : {}),
  });
  await routeLive(relay, route);
  return route;
}

const search = (endpoint: string, authentication: Record<string, unknown>) => ({
  type: 'azure_search', parameters: { endpoint, index_name: 'payroll', authentication },
});
const managed = { type: 'system_assigned_managed_identity' };
const chat = (model: string, sources: unknown[]) => ({ model, messages: [{ role: 'user', content: 'what is in the index?' }], data_sources: sources });
const TEAM_B = 'https://team-b-search.search.windows.net';
const SHARED = 'https://shared-search.search.windows.net';

async function refused(t: Test, route: Seeded, body: string | object) {
  const before = azure.requests.length;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, body);
  t.equal(res.status, 400, res.text);
  t.match(JSON.parse(res.text).error, { param: 'data_sources', message: /managed identity.*dataSourceEndpoints/ });
  t.equal(azure.requests.length, before, 'Azure never heard of it');
}

t.test("a managed-identity source is refused unless the host lists its endpoint", async (t) => {
  const closed = await azureRoute('azure-closed');
  await refused(t, closed, chat(closed.modelSlug, [search(TEAM_B, managed)]));
  await refused(t, closed, chat(closed.modelSlug, [search(TEAM_B, { type: 'user_assigned_managed_identity', managed_identity_resource_id: '/subscriptions/x' })]));
  await refused(t, closed, chat(closed.modelSlug, [search(TEAM_B, { type: ' System_Assigned_Managed_Identity ' })]));
  // Spelled with an escape, which a byte search for the member would miss.
  await refused(t, closed, JSON.stringify(chat(closed.modelSlug, [search(TEAM_B, managed)])).replace('"data_sources"', '"data\\u005fsources"'));

  const open = await azureRoute('azure-shared', [SHARED]);
  await refused(t, open, chat(open.modelSlug, [search(TEAM_B, managed)]));
  await refused(t, open, chat(open.modelSlug, [search(`${SHARED}.evil.example`, managed)]));
  const before = azure.requests.length;
  const ok = await viaRelay(relay, '/vendor-a/v1/chat/completions', open.relayKey, chat(open.modelSlug, [search(`${SHARED}/`, managed)]));
  t.equal(ok.status, 200, ok.text);
  t.equal(azure.requests.length, before + 1);
  t.same(JSON.parse(azure.requests.at(-1)!.body).data_sources, [search(`${SHARED}/`, managed)], 'a listed endpoint reaches Azure');
});

t.test('a source with its own key passes; a key written twice reaches Azure as Relay read it', async (t) => {
  const closed = await azureRoute('azure-keyed');
  const keyed = chat(closed.modelSlug, [search(TEAM_B, { type: 'api_key', key: 'their-own-search-key' })]);
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', closed.relayKey, keyed);
  t.equal(res.status, 200, res.text);
  t.same(JSON.parse(azure.requests.at(-1)!.body).data_sources, keyed.data_sources);

  // The managed identity first, an API key second: a parser keeping the first would use the identity.
  const twice = JSON.stringify(keyed).replace('{"type":"api_key"', '{"type":"system_assigned_managed_identity","type":"api_key"');
  t.match(twice, /"type":"system_assigned_managed_identity","type":"api_key"/);
  const sent = await viaRelay(relay, '/vendor-a/v1/chat/completions', closed.relayKey, twice);
  t.equal(sent.status, 200, sent.text);
  const body = azure.requests.at(-1)!.body;
  t.notMatch(body, /managed_identity/, 'Azure gets the body as Relay read it, the identity gone');
  t.same(JSON.parse(body).data_sources[0].parameters.authentication, { type: 'api_key', key: 'their-own-search-key' });

  const plain = await viaRelay(relay, '/vendor-a/v1/chat/completions', closed.relayKey, { model: closed.modelSlug, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(plain.status, 200, plain.text);
});

t.test('dataSourceEndpoints is checked on every host write', async (t) => {
  const provider = await relay.api('POST', '/api/providers', { metadata: { displayName: 'azure ds' }, spec: { adapter: 'azure-openai' } });
  const host = (dataSourceEndpoints: unknown) => relay.api('POST', '/api/hosts', {
    metadata: { displayName: `azure ds ${Math.random()}` }, spec: { providerId: provider.body.metadata.id, baseUrl: 'https://x.openai.azure.com', options: { dataSourceEndpoints } },
  });
  for (const bad of [['http://plain.search.windows.net'], ['https://x.search.windows.net/indexes/a'], 'https://x.search.windows.net']) {
    const res = await host(bad);
    t.equal(res.status, 400, JSON.stringify(bad));
    t.match(JSON.stringify(res.body), /\/spec\/options\/dataSourceEndpoints/);
  }
  t.equal((await host([SHARED])).status, 201);
});
