// Prices on real requests: a model without a `pricings` entity is priced from the shipped table by
// its upstream model's name (a dated snapshot), cache reads and both lifetimes of cache writes
// included, streamed or not; a `pricings` entity overrides the table; a model neither knows is
// unpriced (cost null), never free. The usage event records where its price came from.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };

// Anthropic counts the prompt's parts apart: 1,000 fresh, 30,000 read, 5,000 written (2,000 for an hour).
const withAnthropicCache = (text: string) => text
  .replaceAll('"cache_read_input_tokens":0', '"cache_read_input_tokens":30000')
  .replaceAll('"cache_creation_input_tokens":0', '"cache_creation_input_tokens":5000')
  .replaceAll('"ephemeral_5m_input_tokens":0', '"ephemeral_5m_input_tokens":3000')
  .replaceAll('"ephemeral_1h_input_tokens":0', '"ephemeral_1h_input_tokens":2000');
// Claude Sonnet 4.5 at $3 in, $0.30 cache hit, $3.75 5m write, $6 1h write, $15 out:
// 1,000x3 + 30,000x0.30 + 3,000x3.75 + 2,000x6 + 500x15 = 42,750 micro-USD.
const SONNET_COST = 0.04275;
// OpenAI counts the cached part inside the prompt: 50 in, 20 of them cached, 15 out.
const withOpenAICache = (text: string) => text.replaceAll('"cached_tokens":0', '"cached_tokens":20');
// gpt-4o at $2.50 in, $1.25 cached, $10 out: 30x2.5 + 20x1.25 + 15x10 = 250 micro-USD.
const GPT4O_COST = 0.00025;

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
up.script((req) => {
  const model = String(req.json?.model);
  const stream = req.json?.stream === true;
  if (req.pathname === '/v1/messages') {
    const body = { model, inputTokens: 1000, outputTokens: 500 };
    return stream
      ? { headers: SSE_HEADERS, frames: anthropic.events(body).map(withAnthropicCache) }
      : { headers: { 'content-type': 'application/json' }, body: withAnthropicCache(JSON.stringify(anthropic.message(body))) };
  }
  return { headers: { 'content-type': 'application/json' }, body: withOpenAICache(JSON.stringify(openai.chatCompletion({ model, inputTokens: 50, outputTokens: 15 }))) };
});

const sonnet = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'sonnet', upstreamModel: 'claude-sonnet-4-5-20250929', policy: { modelIds: '*' } });
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt', upstreamModel: 'gpt-4o-2024-08-06', policy: { modelIds: '*' } });
const priced = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-priced', upstreamModel: 'gpt-4o-2024-08-06', policy: { modelIds: '*' } });
const local = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'local', upstreamModel: 'local-llama-70b', policy: { modelIds: '*' } });
const pricing = await relay.api<any>('POST', '/api/pricings', {
  metadata: { displayName: 'Negotiated gpt-4o' },
  spec: { modelId: priced.modelId, currency: 'EUR', inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 },
});
await settled(relay, (s) => [sonnet, gpt, priced, local].every((x) => s.relayKeys.has(x.relayKeyId)) && s.pricings.size === 1);

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const recordOf = (res: { headers: Headers }) => usageRecord(relay, res.headers.get('x-request-id')!);

t.test('a dated Anthropic snapshot is priced from the table, 1-hour cache writes at their own rate', async (t) => {
  for (const stream of [false, true]) {
    const res = await viaRelay(relay, '/vendor-b/v1/messages', sonnet.relayKey, { ...chat('sonnet'), max_tokens: 64, stream });
    t.equal(res.status, 200);
    const record = await recordOf(res);
    t.match(record, { input_tokens: 36_000, cache_read_tokens: 30_000, cache_write_tokens: 5_000, output_tokens: 500 }, `stream ${stream}: usage`);
    t.equal(record.cost, SONNET_COST, `stream ${stream}: cost`);
    t.equal(record.currency, 'USD');
    t.equal(record.extras.price_source, 'table:claude-sonnet-4-5', `stream ${stream}: the price's source`);
  }
});

t.test('a translated route is priced by its upstream model too', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', sonnet.relayKey, chat('sonnet'));
  t.equal(res.status, 200);
  const record = await recordOf(res);
  t.equal(record.cost, SONNET_COST);
  t.equal(record.extras.price_source, 'table:claude-sonnet-4-5');
});

t.test('a dated OpenAI snapshot is priced from the table', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chat('gpt'));
  const record = await recordOf(res);
  t.equal(record.cost, GPT4O_COST);
  t.equal(record.currency, 'USD');
  t.equal(record.extras.price_source, 'table:gpt-4o');
});

t.test('a pricings entity overrides the table', async (t) => {
  t.equal(pricing.status, 201);
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', priced.relayKey, chat('gpt-priced'));
  const record = await recordOf(res);
  t.equal(record.cost, 0.00007, '30x1 + 20x0.5 + 15x2 micro-EUR');
  t.equal(record.currency, 'EUR');
  t.equal(record.extras.price_source, `pricing:${pricing.body.metadata.slug}`);
});

t.test('a model neither a pricing nor the table knows is unpriced, not free', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', local.relayKey, chat('local'));
  const record = await recordOf(res);
  t.equal(record.input_tokens, 50, 'its tokens are counted');
  t.equal(record.cost, null);
  t.equal(record.currency, null);
  t.notOk('price_source' in record.extras);
});

t.test('pricings take the table\'s rates: cache writes, long-context tiers; bad ones are a 400 naming the field', async (t) => {
  const ok = await relay.api<any>('POST', '/api/pricings', {
    metadata: { displayName: 'Sonnet on our host' },
    spec: {
      modelId: sonnet.modelId, hostId: sonnet.hostId, inputPerMillion: 3, outputPerMillion: 15, cachedInputPerMillion: 0.3,
      cacheWritePerMillion: 3.75, cacheWrite1hPerMillion: 6, longContext: { aboveInputTokens: 200_000, inputPerMillion: 6, outputPerMillion: 22.5 },
    },
  });
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  const bad = await relay.api<any>('POST', '/api/pricings', {
    metadata: { displayName: 'No threshold' },
    spec: { modelId: gpt.modelId, inputPerMillion: 1, outputPerMillion: 2, longContext: { inputPerMillion: 2, outputPerMillion: 4 } },
  });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /longContext/);
  const negative = await relay.api<any>('POST', '/api/pricings', {
    metadata: { displayName: 'Negative' }, spec: { modelId: gpt.modelId, inputPerMillion: 1, outputPerMillion: 2, cacheWrite1hPerMillion: -1 },
  });
  t.equal(negative.status, 400);
  t.match(JSON.stringify(negative.body), /cacheWrite1hPerMillion/);
});
