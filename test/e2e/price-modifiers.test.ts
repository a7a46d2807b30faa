// Anthropic prices some answers at a multiple of the model's rates, and says so in their usage:
// fast mode (`usage.speed: "fast"`: 6x on Opus 4.6 and 4.7, 2x on Opus 4.8) and US-only inference
// (`usage.inference_geo: "us"`: 1.1x on Claude 4.6 and later), stacking. Relay prices the tokens at
// that multiple (an operator's pricing for the model too), never the searches, records which
// applied, and names one the table has no figure for rather than passing a low bill for right.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { editFrame } from '../support/sse-frames.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };
const JSON_HEADERS = { 'content-type': 'application/json' };

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
/** The usage members the next answers carry beside their counts. */
let extra: Record<string, unknown> = {};
up.script((req) => {
  const body = { model: String(req.json?.model), inputTokens: 1000, outputTokens: 500 };
  if (req.json?.stream === true) {
    return { headers: SSE_HEADERS, frames: anthropic.events(body).map((f) => editFrame(f, (d) => {
      if (d.type === 'message_start') d.message.usage = { ...d.message.usage, ...extra };
    })) };
  }
  const message = anthropic.message(body) as Record<string, any>;
  message.usage = { ...message.usage, ...extra };
  return { headers: JSON_HEADERS, body: JSON.stringify(message) };
});

const opus46 = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'opus-46', upstreamModel: 'claude-opus-4-6', policy: { modelIds: '*' } });
const opus48 = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'opus-48', upstreamModel: 'claude-opus-4-8', policy: { modelIds: '*' } });
const opus5 = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'opus-5', upstreamModel: 'claude-opus-5', policy: { modelIds: '*' } });
const opus55 = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'opus-55', upstreamModel: 'claude-opus-5-5', policy: { modelIds: '*' } });
const priced = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'opus-priced', upstreamModel: 'claude-opus-4-6', policy: { modelIds: '*' } });
const made = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'negotiated opus' }, spec: { modelId: priced.modelId, currency: 'USD', inputPerMillion: 4, outputPerMillion: 20, webSearchPerThousand: 10 } });
if (made.status !== 201) throw new Error(JSON.stringify(made.body));
await settled(relay, (s) => [opus46, opus48, opus5, opus55, priced].every((x) => s.relayKeys.has(x.relayKeyId)) && s.pricings.size === 1);

const messages = (model: string, stream: boolean) => ({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] });
// Opus 4.6 from the table: 1,000 x $5 + 500 x $25 per million = 17,500 micro-USD.
const OPUS_TOKENS = 0.0175;

async function recordFor(route: { relayKey: string }, model: string, stream: boolean, usage: Record<string, unknown>) {
  extra = usage;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', route.relayKey, messages(model, stream));
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return usageRecord(relay, res.headers.get('x-request-id')!);
}

t.test('fast mode and US-only inference multiply the tokens\' cost, and stack; whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const fast = await recordFor(opus46, 'opus-46', stream, { speed: 'fast' });
    t.equal(fast.cost, 0.105, `stream ${stream}: fast mode on Opus 4.6 is 6x`);
    t.equal(fast.extras.price_modifiers, 'fast');
    t.notOk('price_modifiers_unpriced' in fast.extras);
    const us = await recordFor(opus46, 'opus-46', stream, { inference_geo: 'us' });
    t.equal(us.cost, 0.01925, `stream ${stream}: US-only inference is 1.1x`);
    t.equal(us.extras.price_modifiers, 'us_inference');
    const both = await recordFor(opus46, 'opus-46', stream, { speed: 'fast', inference_geo: 'us' });
    t.equal(both.cost, 0.1155, `stream ${stream}: 6.6x`);
    t.equal(both.extras.price_modifiers, 'fast,us_inference');
  }
  const standard = await recordFor(opus46, 'opus-46', false, { speed: 'standard', inference_geo: 'global' });
  t.equal(standard.cost, OPUS_TOKENS, 'standard speed, global inference: the model\'s rates');
  t.notOk('price_modifiers' in standard.extras);
  t.equal((await recordFor(opus48, 'opus-48', false, { speed: 'fast' })).cost, 0.035, 'fast mode on Opus 4.8 is 2x');
  t.equal((await recordFor(opus5, 'opus-5', false, { speed: 'fast' })).cost, 0.035, 'and on Opus 5');
});

t.test('an operator\'s pricing is multiplied too; searches are not', async (t) => {
  const record = await recordFor(priced, 'opus-priced', false, { speed: 'fast', server_tool_use: { web_search_requests: 2 } });
  // (1,000 x $4 + 500 x $20) x 6 = 84,000 micro-USD, and 2 searches at $10 per 1,000 = 20,000.
  t.equal(record.cost, 0.104);
  t.equal(record.extras.price_source, 'pricing:negotiated-opus');
  t.equal(record.extras.price_modifiers, 'fast');
});

t.test('a modifier the table has no figure for: priced at the model\'s rates and named as unpriced', async (t) => {
  const record = await recordFor(opus55, 'opus-55', false, { speed: 'fast' });
  // Opus 5.5 at $4 in and $20 out: 1,000 x $4 + 500 x $20 per million.
  t.equal(record.cost, 0.014, 'Opus 5.5 at its own rates (its fast-mode price is not in the table)');
  t.match(record.extras, { price_modifiers: 'fast', price_modifiers_unpriced: 'fast' });
});
