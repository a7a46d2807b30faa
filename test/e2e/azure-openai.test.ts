// The vendor-azure-openai plugin end to end, against a fake Azure OpenAI resource and Entra ID
// token endpoint that speak the real wire (test/support/fake-azure.ts): deployment URLs and
// api-version, the v1 API, api-key and Entra ID auth (a token refused as expired is replaced),
// passthrough that keeps Azure's content-filter annotations, translation that turns a filtered
// answer into a refusal, Azure's errors in the client's shape, and host options checked on write.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { refusingUrl } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const API_KEY = 'azure-key-0123456789abcdef';
const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_ID = '11111111-2222-3333-4444-555555555555';
const CLIENT_SECRET = 'entra~secret~value~0123456789';

const logs: string[] = [];
const relay = await startRelay({
  plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }],
  logLevel: 'debug', logStream: { write: (line: string) => { logs.push(line); } },
});
const azure = await startFakeAzure({
  apiKey: API_KEY,
  deployments: { 'gpt-4o-prod': 'gpt-4o-2024-11-20', 'embed-prod': 'text-embedding-3-small' },
  entra: { tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
});
t.teardown(async () => {
  await relay.close();
  await azure.close();
});

const entraOptions = (extra: Record<string, unknown> = {}) => ({ tenantId: TENANT, clientId: CLIENT_ID, tokenUrl: `${azure.url}/${TENANT}/oauth2/v2.0/token`, ...extra });
const policy = { modelIds: '*' };
const keyed = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY], policy });
const responses = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-responses', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY], policy,
  hostOptions: { apiVersion: '2025-03-01-preview' },
});
const oldVersion = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-old', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY], policy, shapes: ['openai.responses'],
});
const v1 = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-v1', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY], policy, hostOptions: { api: 'v1' } });
const embed = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'embed', upstreamModel: 'embed-prod', hostKeys: [API_KEY], policy });
const missing = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-gone', upstreamModel: 'no-such-deployment', hostKeys: [API_KEY], policy });
const entra = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-entra', upstreamModel: 'gpt-4o-prod', hostKeys: [CLIENT_SECRET], policy, hostOptions: { entra: entraOptions() },
});
const wrongSecret = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-bad-secret', upstreamModel: 'gpt-4o-prod', hostKeys: ['not-the-secret'], policy, hostOptions: { entra: entraOptions() },
});
const all = [keyed, responses, oldVersion, v1, embed, missing, entra, wrongSecret];
await settled(relay, (s) => all.every((x) => s.relayKeys.has(x.relayKeyId)) && s.models.size >= all.length);
const key = keyed.relayKey;
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello' }], ...extra });
const lastRequest = () => azure.requests.at(-1)!;

t.test('Chat Completions: the deployment URL with api-version, the api-key header, Azure\'s annotations kept in passthrough', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, chat('gpt-4o'));
  t.equal(res.status, 200, res.text);
  const req = lastRequest();
  t.equal(req.path, '/openai/deployments/gpt-4o-prod/chat/completions');
  t.equal(req.query.get('api-version'), '2024-10-21', 'the default api-version');
  t.equal(req.headers['api-key'], API_KEY);
  t.equal(req.headers.authorization, undefined, 'no bearer header next to the api-key');
  const body = JSON.parse(res.text) as { prompt_filter_results?: unknown; choices: Array<{ content_filter_results?: unknown; message: { content: string } }> };
  t.ok(body.prompt_filter_results, 'prompt_filter_results reach the client');
  t.ok(body.choices[0].content_filter_results, 'content_filter_results reach the client');
  t.equal(body.choices[0].message.content, 'Hello from Azure.');

  const streamed = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, chat('gpt-4o', { stream: true }));
  t.equal(streamed.status, 200);
  const first = JSON.parse(sseFrames(streamed.text)[0].data) as { prompt_filter_results?: unknown; choices: unknown[] };
  t.ok(first.prompt_filter_results, "Azure's annotation chunk is passed through");
  t.match(streamed.text, /"content":"Azure\."/);
});

t.test('Anthropic clients are translated; a filtered answer becomes a refusal', async (t) => {
  const res = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'Say hello' }] });
  t.equal(res.status, 200, res.text);
  t.equal(lastRequest().path, '/openai/deployments/gpt-4o-prod/chat/completions');
  const message = JSON.parse(res.text) as { content: Array<{ type: string; text: string }>; stop_reason: string };
  t.equal(message.content[0].text, 'Hello from Azure.');
  t.equal(message.stop_reason, 'end_turn');

  const filtered = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'FILTER_ME' }] });
  const refused = JSON.parse(filtered.text) as { content: Array<{ type: string; text: string }>; stop_reason: string };
  t.equal(refused.stop_reason, 'refusal');
  t.match(refused.content.map((p) => p.text).join(' '), /content filter: violence \(high\)/);

  const stream = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'gpt-4o', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'FILTER_ME' }] });
  t.match(stream.text, /"stop_reason":"refusal"/);
  t.match(stream.text, /"text":"is how "/, 'the text before the filter');
  t.match(stream.text, /violence \(high\)/, 'then why it stopped');
});

t.test('a base URL that already holds /openai (or a deployment endpoint) is refused on write, naming /spec/baseUrl, not a 404 at every request', async (t) => {
  const write = (baseUrl: string) => relay.api('POST', '/api/hosts', { metadata: { displayName: `azure base ${Math.random()}` }, spec: { providerId: keyed.providerId, baseUrl } });
  for (const path of ['/openai', '/openai/', '/openai/v1', '/openai/deployments/gpt-4o-prod/chat/completions', '/apim-suffix/openai']) {
    const res = await write(`https://contoso.openai.azure.com${path}`);
    t.equal(res.status, 400, path);
    t.match(res.body.error, { field: '/spec/baseUrl', message: /ends with .*\/openai.*resource endpoint without that path/ }, path);
  }
  t.equal((await write('https://contoso.openai.azure.com')).status, 201, 'the resource endpoint');
  t.equal((await write('https://apim.contoso.net/ai-gateway')).status, 201, 'a gateway prefix of its own (API Management) is kept');
});

t.test('Responses: /openai/responses with the host\'s api-version; an older version gets Azure\'s error in the client\'s shape', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/responses', responses.relayKey, { model: 'gpt-4o-responses', input: 'Say hello' });
  t.equal(res.status, 200, res.text);
  t.equal(lastRequest().path, '/openai/responses');
  t.equal(lastRequest().query.get('api-version'), '2025-03-01-preview');
  t.equal((JSON.parse(lastRequest().body) as { model: string }).model, 'gpt-4o-prod', 'the deployment is the body\'s model');

  const old = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'gpt-4o-old', input: 'Say hello' });
  t.equal(old.status, 400);
  const error = JSON.parse(old.text) as { error: { message: string } };
  t.match(error.error.message, /Responses API is enabled only for api-version 2025-03-01-preview/);
  const anthropicShaped = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'gpt-gone', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(anthropicShaped.status, 404);
  const body = JSON.parse(anthropicShaped.text) as { type: string; error: { type: string; message: string } };
  t.equal(body.type, 'error', 'an Anthropic error body');
  t.match(body.error.message, /deployment for this resource does not exist/, "Azure's words");
});

t.test('the v1 API: /openai/v1/... without api-version, the deployment in the body', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, chat('gpt-4o-v1'));
  t.equal(res.status, 200, res.text);
  t.equal(lastRequest().path, '/openai/v1/chat/completions');
  t.equal(lastRequest().query.get('api-version'), null);
  t.equal((JSON.parse(lastRequest().body) as { model: string }).model, 'gpt-4o-prod');
});

t.test('Embeddings at the deployment URL', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/embeddings', key, { model: 'embed', input: ['a', 'b'] });
  t.equal(res.status, 200, res.text);
  t.equal(lastRequest().path, '/openai/deployments/embed-prod/embeddings');
  t.equal((JSON.parse(res.text) as { data: unknown[] }).data.length, 2);
});

t.test('Entra ID: a client-credentials token, cached, and replaced when Azure refuses it as expired', async (t) => {
  const tokensBefore = azure.tokenRequests.length;
  const first = await viaRelay(relay, '/vendor-a/v1/chat/completions', entra.relayKey, chat('gpt-4o-entra'));
  t.equal(first.status, 200, first.text);
  t.equal(azure.tokenRequests.length, tokensBefore + 1, 'one token request');
  const form = azure.tokenRequests.at(-1)!;
  t.equal(form.get('grant_type'), 'client_credentials');
  t.equal(form.get('client_id'), CLIENT_ID);
  t.equal(form.get('scope'), 'https://cognitiveservices.azure.com/.default');
  t.match(lastRequest().headers.authorization, /^Bearer eyJ0eXAi\./);
  t.equal(lastRequest().headers['api-key'], undefined, 'the client secret is never sent to the resource');

  await viaRelay(relay, '/vendor-a/v1/chat/completions', entra.relayKey, chat('gpt-4o-entra'));
  t.equal(azure.tokenRequests.length, tokensBefore + 1, 'the token is reused while fresh');

  azure.expireTokens();
  const served = azure.requests.length;
  const after = await viaRelay(relay, '/vendor-a/v1/chat/completions', entra.relayKey, chat('gpt-4o-entra'));
  t.equal(after.status, 200, after.text);
  t.equal(azure.tokenRequests.length, tokensBefore + 2, 'a new token was fetched');
  const tried = azure.requests.slice(served);
  t.equal(tried.length, 2, 'refused once with the expired token, then answered with the new one');
  t.not(tried[0].headers.authorization, tried[1].headers.authorization);
});

t.test('Entra ID: a token is fetched again before it expires', async (t) => {
  const shortLived = await startFakeAzure({ deployments: { d: 'gpt-4o' }, entra: { tenantId: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, lifetimeSeconds: 2 } });
  t.teardown(() => shortLived.close());
  const seeded = await seedRoute(relay, {
    baseUrl: shortLived.url, adapter: 'azure-openai', model: 'short-lived', upstreamModel: 'd', hostKeys: [CLIENT_SECRET], policy,
    hostOptions: { entra: { tenantId: TENANT, clientId: CLIENT_ID, tokenUrl: `${shortLived.url}/${TENANT}/oauth2/v2.0/token` } },
  });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId));
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, chat('short-lived'))).status, 200);
  await new Promise((r) => setTimeout(r, 1_200));
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, chat('short-lived'))).status, 200);
  t.equal(shortLived.tokenRequests.length, 2, 'refreshed at half its lifetime');
  t.equal(shortLived.requests.length, 2, 'the resource never saw an expired token');
});

t.test('Entra ID: a refused client secret is a clear error that never contains the secret', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', wrongSecret.relayKey, chat('gpt-4o-bad-secret'));
  t.equal(res.status, 502);
  t.match(res.text, /Microsoft Entra ID refused the client credentials \(invalid_client: AADSTS7000215: Invalid client secret provided\.\)/);
  t.notMatch(res.text, /not-the-secret/);
});

t.test('Entra ID: an unreachable token endpoint is a 502 naming it unreachable, not a 500', async (t) => {
  const seeded = await seedRoute(relay, {
    baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o-no-entra', upstreamModel: 'gpt-4o-prod', hostKeys: [CLIENT_SECRET], policy,
    hostOptions: { entra: entraOptions({ tokenUrl: `${await refusingUrl()}/${TENANT}/oauth2/v2.0/token` }) },
  });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId));
  const served = azure.requests.length;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, chat('gpt-4o-no-entra'));
  t.equal(res.status, 502, res.text);
  t.match(JSON.parse(res.text).error.code, /RELAY_ERR_UPSTREAM_UNREACHABLE/);
  t.equal(azure.requests.length, served, 'nothing was sent to the resource without a token');
});

t.test('host options are checked on write: a 400 naming the option', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ apiVersion: 'yesterday' }, '/spec/options/apiVersion'],
    [{ api: 'v2' }, '/spec/options/api'],
    [{ entra: { tenantId: TENANT } }, '/spec/options/entra/clientId'],
    [{ region: 'westeurope' }, '/spec/options/region'],
  ];
  for (const [options, pointer] of cases) {
    const res = await relay.api('PUT', `/api/hosts/by-id/${keyed.hostId}`, { spec: { options } });
    t.equal(res.status, 400, `${JSON.stringify(options)}: 400`);
    t.equal(res.body?.error?.field, pointer, `${JSON.stringify(options)}: names ${pointer}`);
  }
  const ok = await relay.api('PUT', `/api/hosts/by-id/${keyed.hostId}`, { spec: { options: { apiVersion: '2024-06-01' } } });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
});

t.test('no api-key, client secret or Entra token in a log line or a usage record', async (t) => {
  const records = JSON.stringify((await relay.api('GET', '/api/logs?limit=200')).body);
  t.ok(logs.length > 0 && records.length > 100, 'there is something to search');
  const secrets = [API_KEY, CLIENT_SECRET, 'not-the-secret', ...azure.tokens.keys()];
  for (const secret of secrets) {
    t.notOk(logs.some((line) => line.includes(secret)), `${secret.slice(0, 12)}… is in no log line`);
    t.notOk(records.includes(secret), `${secret.slice(0, 12)}… is in no usage record`);
  }
});
