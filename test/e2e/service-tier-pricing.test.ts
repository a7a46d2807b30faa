// OpenAI bills an answer by the service tier it ran on, which it reports as `service_tier`: priority
// processing at a premium (2x on GPT-5.4, 2.5x on GPT-5.5: Codex's "Fast"), flex at half the
// standard rates, scale against prepaid capacity. Relay prices the tokens at the table's multiple
// for the tier the answer names (not the one asked for), whole and streamed, Chat and Responses,
// passthrough and translated; records it; and names a tier it has no figure for.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute } from '../../core/testing.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { openai } from '../support/fake-upstream.ts';
import { relayWithUpstream, settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { editFrame } from '../support/sse-frames.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };
const JSON_HEADERS = { 'content-type': 'application/json' };

const AZURE_KEY = 'azure-key-tiers';
const { relay, up } = await relayWithUpstream(t, { plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }] });
const azure = await startFakeAzure({ apiKey: AZURE_KEY, deployments: { 'gpt54-prod': 'gpt-5.4' }, backend: up.url });
t.teardown(() => azure.close());
/** The tier the upstream says it served a request on, from what the request asked for. */
let served = (asked: unknown): string => (typeof asked === 'string' && asked !== 'auto' ? asked : 'default');
up.script((req) => {
  const tier = served(req.json?.service_tier);
  const body = { model: String(req.json?.model), inputTokens: 1000, outputTokens: 500 };
  const stream = req.json?.stream === true;
  if (req.pathname === '/v1/responses') {
    if (stream) {
      return { headers: SSE_HEADERS, frames: openai.responseEvents(body).map((f) => editFrame(f, (d) => {
        if (d.response) d.response.service_tier = tier;
      })) };
    }
    return { headers: JSON_HEADERS, body: JSON.stringify({ ...openai.response(body), service_tier: tier }) };
  }
  if (stream) {
    const includeUsage = req.json?.stream_options?.include_usage === true;
    return { headers: SSE_HEADERS, frames: openai.chatChunks({ ...body, includeUsage }).map((f) => editFrame(f, (d) => {
      d.service_tier = tier;
    })) };
  }
  return { headers: JSON_HEADERS, body: JSON.stringify({ ...openai.chatCompletion(body), service_tier: tier }) };
});

const route = (model: string, upstreamModel: string) =>
  seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model, upstreamModel, shapes: ['openai.chat', 'openai.responses'], policy: { modelIds: '*' } });
const gpt54 = await route('gpt-54', 'gpt-5.4');
const gpt55 = await route('gpt-55', 'gpt-5.5');
const nano = await route('gpt-nano', 'gpt-5-nano');
const priced = await route('gpt-priced', 'gpt-5.4');
const onAzure = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-azure', upstreamModel: 'gpt54-prod', hostKeys: [AZURE_KEY], policy: { modelIds: '*' } });
const ownFigures = await route('gpt-own-figures', 'gpt-5.4');
const pricings = [
  { metadata: { displayName: 'negotiated gpt' }, spec: { modelId: priced.modelId, currency: 'USD', inputPerMillion: 2, outputPerMillion: 12 } },
  // An Azure deployment's name is the operator's: the table does not know it, so its pricing gives the tiers' figures.
  { metadata: { displayName: 'azure deployment' }, spec: { modelId: onAzure.modelId, currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 15, modifiers: { priority: 2 } } },
  { metadata: { displayName: 'own figures' }, spec: { modelId: ownFigures.modelId, currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 15, modifiers: { priority: 3 } } },
];
for (const pricing of pricings) {
  const made = await relay.api('POST', '/api/pricings', pricing);
  if (made.status !== 201) throw new Error(JSON.stringify(made.body));
}
await settled(relay, (s) => [gpt54, gpt55, nano, priced, onAzure, ownFigures].every((x) => s.relayKeys.has(x.relayKeyId)) && s.pricings.size === pricings.length);

// GPT-5.4 from the table: 1,000 x $2.50 + 500 x $15 per million = 10,000 micro-USD.
const GPT54_TOKENS = 0.01;

type Inbound = 'chat' | 'responses' | 'messages';
const PATHS: Record<Inbound, string> = { chat: '/vendor-a/v1/chat/completions', responses: '/vendor-a/v1/responses', messages: '/vendor-b/v1/messages' };

function requestBody(inbound: Inbound, model: string, stream: boolean, tier: string | undefined): Record<string, unknown> {
  const asked = tier === undefined ? {} : { service_tier: tier };
  if (inbound === 'responses') return { model, input: 'hi', stream, ...asked };
  if (inbound === 'messages') return { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] };
  return { model, stream, messages: [{ role: 'user', content: 'hi' }], ...asked };
}

async function recordFor(r: { relayKey: string }, model: string, inbound: Inbound, stream: boolean, tier?: string) {
  const res = await viaRelay(relay, PATHS[inbound], r.relayKey, requestBody(inbound, model, stream, tier));
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return { res, record: await usageRecord(relay, res.headers.get('x-request-id')!) };
}

t.test('priority and flex multiply the tokens\' cost: Chat and Responses passed through, whole and streamed', async (t) => {
  for (const inbound of ['chat', 'responses'] as const) {
    for (const stream of [false, true]) {
      const at = `${inbound}, stream ${stream}`;
      const priority = await recordFor(gpt54, 'gpt-54', inbound, stream, 'priority');
      t.equal(priority.record.cost, 0.02, `${at}: priority on GPT-5.4 is 2x`);
      t.equal(priority.record.extras.price_modifiers, 'priority', at);
      t.notOk('price_modifiers_unpriced' in priority.record.extras, at);
      t.equal(priority.record.input_tokens, 1000, `${at}: the tokens are read as before`);
      const flex = await recordFor(gpt54, 'gpt-54', inbound, stream, 'flex');
      t.equal(flex.record.cost, 0.005, `${at}: flex is half`);
      t.equal(flex.record.extras.price_modifiers, 'flex', at);
      const standard = await recordFor(gpt54, 'gpt-54', inbound, stream, 'default');
      t.equal(standard.record.cost, GPT54_TOKENS, `${at}: the default tier is the model's rates`);
      t.notOk('price_modifiers' in standard.record.extras, at);
    }
  }
  t.equal((await recordFor(gpt55, 'gpt-55', 'responses', true, 'priority')).record.cost, 0.05, 'GPT-5.5 on priority (Codex\'s Fast) is 2.5x');
});

t.test('Azure OpenAI\'s answers are read the same way, priced by the deployment\'s pricing and its figures', async (t) => {
  for (const stream of [false, true]) {
    const { record } = await recordFor(onAzure, 'gpt-azure', 'chat', stream, 'priority');
    t.equal(record.extras.price_modifiers, 'priority', `stream ${stream}`);
    t.equal(record.extras.price_source, 'pricing:azure-deployment');
    t.equal(record.cost, 0.02, `stream ${stream}: the pricing's priority figure, 2x`);
    t.notOk('price_modifiers_unpriced' in record.extras);
  }
  const flex = await recordFor(onAzure, 'gpt-azure', 'chat', false, 'flex');
  t.equal(flex.record.cost, GPT54_TOKENS, 'a figure neither the pricing nor the table has: the pricing\'s rates');
  t.match(flex.record.extras, { price_modifiers: 'flex', price_modifiers_unpriced: 'flex' });
});

t.test('the tier the answer ran on is billed, not the one asked for', async (t) => {
  const saved = served;
  t.teardown(() => { served = saved; });
  served = () => 'default';
  const declined = await recordFor(gpt54, 'gpt-54', 'chat', false, 'priority');
  t.equal(declined.record.cost, GPT54_TOKENS, 'asked for priority, served on default: standard rates');
  t.notOk('price_modifiers' in declined.record.extras);
  served = () => 'priority';
  const projectDefault = await recordFor(gpt54, 'gpt-54', 'responses', false, 'auto');
  t.equal(projectDefault.record.cost, 0.02, 'asked for auto, served on priority (a project set to priority): 2x');
});

t.test('a translated request is billed by the tier its upstream reports too', async (t) => {
  const saved = served;
  t.teardown(() => { served = saved; });
  served = () => 'priority';
  for (const stream of [false, true]) {
    const { res, record } = await recordFor(gpt54, 'gpt-54', 'messages', stream);
    t.equal(record.cost, 0.02, `a Messages client on an OpenAI model, stream ${stream}: 2x`);
    t.equal(record.extras.price_modifiers, 'priority');
    t.notMatch(res.text, /service_tier/, 'the Messages answer does not carry OpenAI\'s tier');
  }
});

t.test('an operator\'s pricing is multiplied by the table\'s figures, or by its own', async (t) => {
  const { record } = await recordFor(priced, 'gpt-priced', 'chat', true, 'priority');
  // (1,000 x $2 + 500 x $12) x 2 = 16,000 micro-USD.
  t.equal(record.cost, 0.016);
  t.equal(record.extras.price_source, 'pricing:negotiated-gpt');
  t.equal(record.extras.price_modifiers, 'priority');
  t.equal((await recordFor(ownFigures, 'gpt-own-figures', 'chat', false, 'priority')).record.cost, 0.03, 'the pricing\'s priority figure (3) replaces the table\'s (2)');
  t.equal((await recordFor(ownFigures, 'gpt-own-figures', 'chat', false, 'flex')).record.cost, 0.005, 'the table\'s flex figure still applies');
});

t.test('a pricing\'s modifiers are checked', async (t) => {
  for (const modifiers of [{ priority: -1 }, { Priority: 2 }, { priority: 'x' }, Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`m${i}`, 1]))]) {
    const res = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'bad figures' }, spec: { modelId: priced.modelId, currency: 'USD', inputPerMillion: 1, outputPerMillion: 1, modifiers } });
    t.equal(res.status, 400, JSON.stringify(modifiers).slice(0, 40));
    t.match(JSON.stringify(res.body), /modifiers/, 'the error names the field');
  }
});

t.test('a tier the table has no figure for: priced at the model\'s rates and named as unpriced', async (t) => {
  const unlisted = await recordFor(nano, 'gpt-nano', 'chat', false, 'priority');
  t.equal(unlisted.record.cost, 0.00025, 'GPT-5 nano has no priority rates in the table: its standard ones');
  t.match(unlisted.record.extras, { price_modifiers: 'priority', price_modifiers_unpriced: 'priority' });
  const scale = await recordFor(gpt54, 'gpt-54', 'responses', false, 'scale');
  t.equal(scale.record.cost, GPT54_TOKENS, 'scale tier is prepaid capacity: no per-token figure');
  t.match(scale.record.extras, { price_modifiers: 'scale', price_modifiers_unpriced: 'scale' });
  const other = await recordFor(gpt54, 'gpt-54', 'chat', false, 'on_demand');
  t.notOk('price_modifiers' in other.record.extras, 'another vendor\'s tier name on this shape is not a modifier');
});
