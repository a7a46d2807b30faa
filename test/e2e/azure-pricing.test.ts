// An Azure OpenAI deployment is named by the operator (`chat-prod`), so the price table does not
// know the binding's upstream model; the answer names the model behind it (`gpt-4o-2024-11-20`),
// which prices it from the table at OpenAI's list price: whole and streamed, passed through and
// translated, chat and embeddings. The record names the answering model.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const API_KEY = 'azure-key-pricing-0123456789';
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }] });
const azure = await startFakeAzure({ apiKey: API_KEY, deployments: { 'chat-prod': 'gpt-4o-2024-11-20', 'embed-prod': 'text-embedding-3-small', 'own-prod': 'my-finetune' } });
t.teardown(async () => {
  await relay.close();
  await azure.close();
});

const policy = { modelIds: '*' as const };
const chat = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'chat', upstreamModel: 'chat-prod', hostKeys: [API_KEY], policy });
const embed = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'embed', upstreamModel: 'embed-prod', hostKeys: [API_KEY], policy });
const own = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'own', upstreamModel: 'own-prod', hostKeys: [API_KEY], policy });
await settled(relay, (s) => [chat, embed, own].every((x) => s.relayKeys.has(x.relayKeyId)));

/** gpt-4o's list price: $2.50 in, $10 out per million. */
const gpt4oCost = (r: { input_tokens: number; output_tokens: number }) => Math.round(r.input_tokens * 2.5 + r.output_tokens * 10) / 1e6;

async function recordOf(path: string, key: string, body: Record<string, unknown>) {
  const res = await viaRelay(relay, path, key, body);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return usageRecord(relay, res.headers.get('x-request-id')!);
}

t.test('a chat deployment is priced by the model its answers name, whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const record = await recordOf('/vendor-a/v1/chat/completions', chat.relayKey, { model: 'chat', stream, messages: [{ role: 'user', content: 'hi' }] });
    t.ok(record.input_tokens > 0 && record.output_tokens > 0, `stream ${stream}: tokens read`);
    t.equal(record.extras.price_source, 'table:gpt-4o', `stream ${stream}`);
    t.equal(record.cost, gpt4oCost(record));
    t.equal(record.extras.answered_by, 'gpt-4o-2024-11-20');
  }
});

t.test('translated: a Messages client on the deployment, whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const record = await recordOf('/vendor-b/v1/messages', chat.relayKey, { model: 'chat', max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(record.extras.price_source, 'table:gpt-4o', `stream ${stream}`);
    t.equal(record.cost, gpt4oCost(record));
  }
});

t.test('an embeddings deployment too', async (t) => {
  const record = await recordOf('/vendor-a/v1/embeddings', embed.relayKey, { model: 'embed', input: ['a', 'b'] });
  t.equal(record.extras.price_source, 'table:text-embedding-3-small');
  t.equal(record.cost, Math.round(record.input_tokens * 0.02) / 1e6);
});

t.test('a model the table does not know stays unpriced', async (t) => {
  const record = await recordOf('/vendor-a/v1/chat/completions', own.relayKey, { model: 'own', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(record.cost, null);
  t.notOk('price_source' in record.extras);
});
