// Claude's safety classifiers (Fable 5 and later) decline some requests with a normal answer,
// stop_reason "refusal". Anthropic bills nothing for a refusal before any output, and bills one
// after output as usual. With the `fallbacks` parameter (the SDKs' server-side fallback) a refused
// request is re-served by another model inside the same call, billed at that model's rates, and
// the answer names it. Relay records such an answer at cost 0 (extras.unbilled) or at the
// answering model's rates (extras.answered_by), whole and streamed, passed through and translated.
import t from 'tap';
import { seedRoute } from '../../core/testing.ts';
import { anthropic } from '../support/fake-upstream.ts';
import { relayWithUpstream, settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { editFrame } from '../support/sse-frames.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const STOP_DETAILS = { type: 'refusal', category: 'cyber', explanation: 'This request was declined.' };

type Outcome = 'answer' | 'refused-early' | 'refused-late' | 'fallback';
/** What the upstream does with the next requests. */
let outcome: Outcome = 'answer';

const { relay, up } = await relayWithUpstream(t);
up.script((req) => {
  const model = outcome === 'fallback' ? 'claude-opus-4-8' : String(req.json?.model);
  const body = { model, inputTokens: 10_000, outputTokens: 1_000 };
  const early = outcome === 'refused-early';
  const refusal = early || outcome === 'refused-late';
  if (req.json?.stream === true) {
    const frames = anthropic.events(body)
      .filter((f) => !(early && f.includes('content_block')))
      .map((f) => editFrame(f, (d) => {
        if (d.type === 'message_delta' && refusal) {
          d.delta = { ...d.delta, stop_reason: 'refusal', stop_details: STOP_DETAILS };
          if (early) d.usage = { ...d.usage, output_tokens: 1 };
        }
      }));
    return { headers: SSE_HEADERS, frames };
  }
  const message = anthropic.message(body) as Record<string, any>;
  if (refusal) Object.assign(message, { stop_reason: 'refusal', stop_details: STOP_DETAILS });
  if (early) Object.assign(message, { content: [], usage: { ...message.usage, output_tokens: 1 } });
  return { headers: JSON_HEADERS, body: JSON.stringify(message) };
});

const fable = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'fable', upstreamModel: 'claude-fable-5', policy: { modelIds: '*' } });
const negotiated = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'fable-negotiated', upstreamModel: 'claude-fable-5', policy: { modelIds: '*' } });
const made = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'negotiated fable' }, spec: { modelId: negotiated.modelId, currency: 'USD', inputPerMillion: 8, outputPerMillion: 40 } });
if (made.status !== 201) throw new Error(JSON.stringify(made.body));
await settled(relay, (s) => [fable, negotiated].every((x) => s.relayKeys.has(x.relayKeyId)) && s.pricings.size === 1);

// Fable 5 from the table: 10,000 x $10 + 1,000 x $50 per million; Opus 4.8: $5 and $25.
const FABLE_COST = 0.15;
const OPUS_COST = 0.075;

async function recordFor(route: { relayKey: string }, model: string, next: Outcome, stream: boolean, inbound: 'messages' | 'chat' = 'messages') {
  outcome = next;
  const res = inbound === 'messages'
    ? await viaRelay(relay, '/vendor-b/v1/messages', route.relayKey, { model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] })
    : await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model, stream, messages: [{ role: 'user', content: 'hi' }] });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return { res, record: await usageRecord(relay, res.headers.get('x-request-id')!) };
}

t.test('a refusal before any output: the tokens are recorded, the cost is 0, and the record says why', async (t) => {
  for (const stream of [false, true]) {
    const { res, record } = await recordFor(fable, 'fable', 'refused-early', stream);
    t.match(res.text, /refusal/, `stream ${stream}: the client gets the refusal as sent`);
    t.equal(record.cost, 0, `stream ${stream}`);
    t.equal(record.input_tokens, 10_000);
    t.equal(record.extras.unbilled, 'refusal');
    t.equal(record.extras.price_source, 'table:claude-fable-5');
  }
});

t.test('a refusal after output is billed as usual; so is an answer', async (t) => {
  for (const stream of [false, true]) {
    const late = await recordFor(fable, 'fable', 'refused-late', stream);
    t.equal(late.record.cost, FABLE_COST, `stream ${stream}: refused after output`);
    t.notOk('unbilled' in late.record.extras);
    const answered = await recordFor(fable, 'fable', 'answer', stream);
    t.equal(answered.record.cost, FABLE_COST, `stream ${stream}: answered`);
    t.notOk('answered_by' in answered.record.extras, 'the model asked for answered');
  }
});

t.test('re-served by a fallback model: priced at the model that answered, which the record names', async (t) => {
  for (const stream of [false, true]) {
    const { record } = await recordFor(fable, 'fable', 'fallback', stream);
    t.equal(record.cost, OPUS_COST, `stream ${stream}: Opus 4.8's rates, not Fable 5's`);
    t.equal(record.extras.answered_by, 'claude-opus-4-8');
    t.equal(record.extras.price_source, 'table:claude-opus-4-8');
  }
});

t.test('translated: a Chat client on Claude is billed the same way', async (t) => {
  for (const stream of [false, true]) {
    const early = await recordFor(fable, 'fable', 'refused-early', stream, 'chat');
    t.equal(early.record.cost, 0, `stream ${stream}: refused before output`);
    t.equal(early.record.extras.unbilled, 'refusal');
    const fallback = await recordFor(fable, 'fable', 'fallback', stream, 'chat');
    t.equal(fallback.record.cost, OPUS_COST, `stream ${stream}: re-served by Opus 4.8`);
  }
});

t.test('an operator\'s pricing for the model still applies; an unbilled refusal is 0 under it too', async (t) => {
  const { record } = await recordFor(negotiated, 'fable-negotiated', 'fallback', false);
  // 10,000 x $8 + 1,000 x $40 per million: the pricing names the Relay model, whichever answered.
  t.equal(record.cost, 0.12);
  t.equal(record.extras.price_source, 'pricing:negotiated-fable');
  t.equal(record.extras.answered_by, 'claude-opus-4-8');
  t.equal((await recordFor(negotiated, 'fable-negotiated', 'refused-early', true)).record.cost, 0);
});
