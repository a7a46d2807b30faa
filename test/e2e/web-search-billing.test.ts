// Web searches are billed per search, and the usage record says how many the upstream ran:
// Anthropic's usage.server_tool_use.web_search_requests (whole, and in a stream's message_delta),
// OpenAI's web_search_call output items (whole, and in a stream's response.completed). A pricing's
// webSearchPerThousand prices them, and the shipped table has Anthropic's rate and OpenAI's reasoning models'; without a rate the
// cost is the tokens' alone and the record says the searches went unpriced. Passthrough and
// translated alike, and a Messages client translated from OpenAI sees the count in its usage.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { editFrame } from '../support/sse-frames.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const SEARCHED = { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'relay' } };

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
    if (stream) {
      return { headers: SSE_HEADERS, frames: anthropic.events(body).map((f) => editFrame(f, (d) => {
        if (d.type === 'message_delta') d.usage = { ...d.usage, server_tool_use: { web_search_requests: 3 } };
      })) };
    }
    const message = anthropic.message(body) as Record<string, any>;
    message.usage = { ...message.usage, server_tool_use: { web_search_requests: 3 } };
    return { headers: JSON_HEADERS, body: JSON.stringify(message) };
  }
  const body = { model, inputTokens: 100, outputTokens: 10 };
  if (stream) {
    return { headers: SSE_HEADERS, frames: openai.responseEvents(body).map((f) => editFrame(f, (d) => {
      if (d.type === 'response.completed') d.response.output = [{ ...SEARCHED, id: 'ws_1' }, { ...SEARCHED, id: 'ws_2' }, ...d.response.output];
    })) };
  }
  const response = openai.response(body);
  response.output = [{ ...SEARCHED, id: 'ws_1' }, { ...SEARCHED, id: 'ws_2' }, ...(response.output as unknown[])];
  return { headers: JSON_HEADERS, body: JSON.stringify(response) };
});

// Table-priced: claude-sonnet-4-5 at $3 in, $15 out and $10 per 1,000 searches; gpt-5 at $1.25 in,
// $10 out and $10 per 1,000 (a reasoning model, either tool version); gpt-4.1 at $2 in, $8 out and
// no rate for searches (it is $10 or $25 per 1,000 by the tool's version, which the answer does not say).
const tabled = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-tabled', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
const gptTabled = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-tabled', upstreamModel: 'gpt-5', shapes: ['openai.responses'], policy: { modelIds: '*' } });
const gpt41Tabled = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-41-tabled', upstreamModel: 'gpt-4.1', shapes: ['openai.responses'], policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-priced', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-priced', upstreamModel: 'gpt-5', shapes: ['openai.responses'], policy: { modelIds: '*' } });
for (const [route, rates] of [[claude, { inputPerMillion: 3, outputPerMillion: 15, webSearchPerThousand: 10 }], [gpt, { inputPerMillion: 1, outputPerMillion: 2, webSearchPerThousand: 25 }]] as const) {
  const made = await relay.api('POST', '/api/pricings', { metadata: { displayName: `searches ${route.modelId}` }, spec: { modelId: route.modelId, currency: 'USD', ...rates } });
  if (made.status !== 201) throw new Error(`a pricing with webSearchPerThousand was refused: ${JSON.stringify(made.body)}`);
}
await settled(relay, (s) => [tabled, gptTabled, gpt41Tabled, claude, gpt].every((x) => s.relayKeys.has(x.relayKeyId)) && s.pricings.size === 2);

const recordOf = (res: { headers: Headers }) => usageRecord(relay, res.headers.get('x-request-id')!);
const messages = (model: string, stream: boolean) => ({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'search' }] });
// 1,000x3 + 500x15 = 10,500 micro-USD of tokens; 3 searches at $10 per 1,000 = 30,000.
const CLAUDE_TOKENS = 0.0105;

t.test('Anthropic searches: counted, priced at the pricing\'s rate, passed through and translated', async (t) => {
  for (const stream of [false, true]) {
    const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages('claude-priced', stream));
    t.equal(res.status, 200);
    const record = await recordOf(res);
    t.equal(record.cost, CLAUDE_TOKENS + 0.03, `stream ${stream}: tokens and three searches`);
    t.equal(record.extras.web_search_requests, '3');
    t.notOk('web_search_unpriced' in record.extras);
  }
  const translated = await viaRelay(relay, '/vendor-a/v1/chat/completions', claude.relayKey, { model: 'claude-priced', messages: [{ role: 'user', content: 'search' }] });
  t.equal(translated.status, 200);
  const record = await recordOf(translated);
  t.equal(record.cost, CLAUDE_TOKENS + 0.03, 'a Chat client on Claude pays the searches too');
  t.equal(record.extras.web_search_requests, '3');
});

t.test('the shipped table prices Anthropic\'s searches', async (t) => {
  for (const stream of [false, true]) {
    const res = await viaRelay(relay, '/vendor-b/v1/messages', tabled.relayKey, messages('claude-tabled', stream));
    const record = await recordOf(res);
    t.equal(record.cost, CLAUDE_TOKENS + 0.03, `stream ${stream}: tokens and three searches at $10 per 1,000`);
    t.equal(record.extras.price_source, 'table:claude-sonnet-4-5');
    t.equal(record.extras.web_search_requests, '3');
    t.notOk('web_search_unpriced' in record.extras);
  }
});

t.test('the shipped table prices an OpenAI reasoning model\'s searches; gpt-4.1\'s are left unpriced and the record says so', async (t) => {
  const cases = [
    // 100x1.25 + 10x10 = 225 micro-USD of tokens; 2 searches at $10 per 1,000 = 20,000.
    { route: gptTabled, model: 'gpt-tabled', cost: 0.020225, source: 'table:gpt-5', unpriced: false },
    // 100x2 + 10x8 = 280 micro-USD: the tokens alone.
    { route: gpt41Tabled, model: 'gpt-41-tabled', cost: 0.00028, source: 'table:gpt-4.1', unpriced: true },
  ];
  for (const c of cases) {
    for (const stream of [false, true]) {
      const record = await recordOf(await viaRelay(relay, '/vendor-a/v1/responses', c.route.relayKey, { model: c.model, input: 'search', stream }));
      t.equal(record.cost, c.cost, `${c.model}, stream ${stream}`);
      t.equal(record.extras.price_source, c.source);
      t.equal(record.extras.web_search_requests, '2');
      t.equal(record.extras.web_search_unpriced, c.unpriced ? 'true' : undefined);
    }
  }
});

t.test('a Messages client on an OpenAI model sees the searches in its usage, whole and streamed', async (t) => {
  const whole = await viaRelay(relay, '/vendor-b/v1/messages', gpt.relayKey, messages('gpt-priced', false));
  t.equal(whole.status, 200);
  t.same(JSON.parse(whole.text).usage.server_tool_use, { web_search_requests: 2 });
  const streamed = await viaRelay(relay, '/vendor-b/v1/messages', gpt.relayKey, messages('gpt-priced', true));
  t.equal(streamed.status, 200);
  const deltas = streamed.text.split('\n').filter((l) => l.startsWith('data: ') && l.includes('"message_delta"'));
  t.equal(deltas.length, 1);
  t.same(JSON.parse(deltas[0]!.slice(6)).usage.server_tool_use, { web_search_requests: 2 });
});

t.test('OpenAI searches: each web_search_call is one, whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const res = await viaRelay(relay, '/vendor-a/v1/responses', gpt.relayKey, { model: 'gpt-priced', input: 'search', stream });
    t.equal(res.status, 200);
    const record = await recordOf(res);
    // 100x1 + 10x2 = 120 micro-USD of tokens; 2 searches at $25 per 1,000 = 50,000.
    t.equal(record.cost, 0.05012, `stream ${stream}: tokens and two searches`);
    t.equal(record.extras.web_search_requests, '2');
  }
});

t.test('a pricing\'s search rate is checked like its other rates', async (t) => {
  const bad = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'negative searches' }, spec: { modelId: gpt.modelId, currency: 'USD', inputPerMillion: 1, outputPerMillion: 1, webSearchPerThousand: -1 } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /webSearchPerThousand/);
});
