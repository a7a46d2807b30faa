// Model fallbacks on a refusal another model may answer (issue 42 items 1 and 3): the vendor
// adapters classify a context-length error and a content-filter refusal, and the kernel moves to
// the next fallback that takes it; a prompt clearly over a model's spec.contextWindow goes straight
// to the first fallback whose window fits, without a round trip to the short model.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, anthropic, openai, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ logLevel: 'warn' });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

async function fake(options: Parameters<typeof startFakeUpstream>[0] = {}): Promise<FakeUpstream> {
  const up = await startFakeUpstream(options);
  upstreams.push(up);
  return up;
}

const shortUp = await fake();
const claudeUp = await fake();
const longUp = await fake();
const short = await seedRoute(relay, { baseUrl: `${shortUp.url}/v1`, adapter: 'openai', model: 'cw-short', model_spec: { contextWindow: 1000 } });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'cw-claude' });
const long = await seedRoute(relay, { baseUrl: `${longUp.url}/v1`, adapter: 'openai', model: 'cw-long', model_spec: { contextWindow: 1_000_000 } });
const grant = async (s: Seeded) => {
  const res = await relay.api('PUT', `/api/policies/by-id/${s.policyId}`, { spec: { modelIds: [short.modelId, claude.modelId, long.modelId] } });
  if (res.status !== 200) throw new Error(`policy: ${res.status}`);
};
await grant(short);
await grant(claude);

type Fallbacks = Array<{ modelId: string; on?: string[] }>;
const summary = (fallbacks: Fallbacks | undefined) => JSON.stringify((fallbacks ?? []).map((f) => [f.modelId, f.on ?? null]));
async function setFallbacks(model: Seeded, fallbacks: Fallbacks): Promise<void> {
  const res = await relay.api('PUT', `/api/models/by-id/${model.modelId}`, { spec: { fallbacks } });
  if (res.status !== 200) throw new Error(`setting fallbacks: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => summary(s.models.get(model.modelId)?.spec.fallbacks) === summary(fallbacks));
}

/** A model with a 1,000-token window on its own fake upstream, falling back to cw-long when the prompt is over it. */
async function nearWindowModel(model: string, adapter: 'openai' | 'anthropic'): Promise<{ countUp: FakeUpstream; counted: Seeded }> {
  const countUp = await fake();
  const counted = await seedRoute(relay, { baseUrl: `${countUp.url}/v1`, adapter, model, model_spec: { contextWindow: 1000 } });
  await relay.api('PUT', `/api/policies/by-id/${counted.policyId}`, { spec: { modelIds: [counted.modelId, long.modelId] } });
  await settled(relay, (s) => s.relayKeys.has(counted.relayKeyId) && s.policies.get(counted.policyId)?.spec.modelIds.length === 2 && s.hostKeysOfHost(counted.hostId).length === 1);
  await setFallbacks(counted, [{ modelId: long.modelId, on: ['context_window_exceeded'] }]);
  return { countUp, counted };
}

await settled(relay, (s) => s.relayKeys.has(short.relayKeyId) && s.relayKeys.has(claude.relayKeyId)
  && s.policies.get(claude.policyId)?.spec.modelIds.length === 3 && s.policies.get(short.policyId)?.spec.modelIds.length === 3
  && [short, claude, long].every((x) => s.hostKeysOfHost(x.hostId).length === 1));

const chat = (content: string) => ({ model: 'cw-short', messages: [{ role: 'user', content }] });
const contextError = { status: 400, body: openai.error("This model's maximum context length is 1000 tokens. However, your messages resulted in 5000 tokens.", 'invalid_request_error', 'context_length_exceeded', 'messages') };

t.test("an OpenAI context_length_exceeded moves to the next fallback; the record says why", async (t) => {
  await setFallbacks(short, [{ modelId: long.modelId }]);
  shortUp.enqueue(contextError);
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', short.relayKey, chat('a short prompt'));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'cw-long');
  t.equal(JSON.parse(res.text).object, 'chat.completion');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-short', outcome: 'context_window_exceeded' }, { model: 'cw-long' }]);
  t.equal(record.model_slug, 'cw-long');
  const metrics = String((await relay.api<string>('GET', '/metrics')).body);
  t.match(metrics, /relay_model_fallbacks_total\{model="cw-short",reason="context_window_exceeded"\} [1-9]/, '/metrics counts the fallback by model and reason');
});

t.test('an OpenAI content_filter refusal moves on only to a fallback that takes content_filter', async (t) => {
  const filtered = { status: 400, body: openai.error('The response was filtered due to the prompt triggering content management policy.', 'invalid_request_error', 'content_filter', 'prompt') };
  await setFallbacks(short, [{ modelId: long.modelId, on: ['server_error'] }]);
  shortUp.enqueue(filtered);
  const longBefore = longUp.count;
  const passed = await viaRelay(relay, '/vendor-a/v1/chat/completions', short.relayKey, chat('hi'));
  t.equal(passed.status, 400, 'no fallback takes it: the upstream\'s own 400, as before');
  t.match(JSON.parse(passed.text), { error: { code: 'content_filter' } });
  t.equal(longUp.count, longBefore, 'the fallback was not called');

  await setFallbacks(short, [{ modelId: long.modelId, on: ['content_filter'] }]);
  shortUp.enqueue(filtered);
  const moved = await viaRelay(relay, '/vendor-a/v1/chat/completions', short.relayKey, chat('hi'));
  t.equal(moved.status, 200, moved.text);
  t.equal(moved.headers.get('x-relay-served-model'), 'cw-long');
  const record = await usageRecord(relay, moved.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-short', outcome: 'content_filter' }, { model: 'cw-long' }]);
});

t.test("an Anthropic 'prompt is too long' moves a Messages request to an OpenAI fallback, in the Messages shape", async (t) => {
  await setFallbacks(claude, [{ modelId: long.modelId, on: ['context_window_exceeded'] }]);
  claudeUp.enqueue({ status: 400, body: anthropic.error('invalid_request_error', 'prompt is too long: 210345 tokens > 200000 maximum') });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, {
    model: 'cw-claude', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }],
  });
  t.equal(res.status, 200, res.text);
  const body = JSON.parse(res.text);
  t.equal(body.type, 'message');
  t.equal(body.model, 'cw-long');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-claude', outcome: 'context_window_exceeded' }, { model: 'cw-long' }]);
});

t.test('a translated request: an Anthropic fallback\'s context error decoded by the adapter moves on too', async (t) => {
  // A Chat Completions request to cw-short (400 context) -> cw-claude (translated, 400 prompt too long) -> cw-long.
  await setFallbacks(short, [{ modelId: claude.modelId }, { modelId: long.modelId }]);
  shortUp.enqueue(contextError);
  claudeUp.enqueue({ status: 400, body: anthropic.error('invalid_request_error', 'prompt is too long: 210345 tokens > 200000 maximum') });
  const claudeBefore = claudeUp.count;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', short.relayKey, chat('hello'));
  t.equal(res.status, 200, res.text);
  t.equal(claudeUp.count - claudeBefore, 1, 'the Anthropic fallback was asked once');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [
    { model: 'cw-short', outcome: 'context_window_exceeded' }, { model: 'cw-claude', outcome: 'context_window_exceeded' }, { model: 'cw-long' },
  ]);
});

t.test('a Responses request whose prompt is clearly over the window goes to the long-context model without touching the short one', async (t) => {
  await setFallbacks(short, [{ modelId: long.modelId, on: ['context_window_exceeded'] }]);
  const shortBefore = shortUp.count;
  const longBefore = longUp.count;
  // ~20 KB of text: ~5,000 tokens by bytes/4, over 1,000 with any margin.
  const res = await viaRelay(relay, '/vendor-a/v1/responses', short.relayKey, { model: 'cw-short', input: 'lorem ipsum '.repeat(1700) });
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'cw-long');
  t.equal(shortUp.count, shortBefore, 'the short model was never called');
  t.equal(longUp.count - longBefore, 1);
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-short', outcome: 'context_window_exceeded' }, { model: 'cw-long' }]);

  // A prompt that fits still goes to the short model.
  const small = await viaRelay(relay, '/vendor-a/v1/responses', short.relayKey, { model: 'cw-short', input: 'hi' });
  t.equal(small.status, 200, small.text);
  t.equal(shortUp.count - shortBefore, 1, 'a short prompt is served by the short model');
});

t.test('over the window and no later fallback fits: the last one is sent anyway, and its own answer is the client\'s', async (t) => {
  const tinyUp = await fake();
  const tiny = await seedRoute(relay, { baseUrl: `${tinyUp.url}/v1`, adapter: 'openai', model: 'cw-tiny', model_spec: { contextWindow: 100 } });
  await relay.api('PUT', `/api/policies/by-id/${short.policyId}`, { spec: { modelIds: [short.modelId, claude.modelId, long.modelId, tiny.modelId] } });
  await settled(relay, (s) => s.policies.get(short.policyId)?.spec.modelIds.length === 4 && s.hostKeysOfHost(tiny.hostId).length === 1);
  await setFallbacks(short, [{ modelId: tiny.modelId }]);
  const shortBefore = shortUp.count;
  tinyUp.enqueue(contextError);
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', short.relayKey, chat('lorem ipsum '.repeat(1700)));
  t.equal(shortUp.count - shortBefore, 0, 'the short model was skipped (a fallback takes context_window_exceeded)');
  t.equal(tinyUp.count, 1, 'the estimate is not exact: the last model is asked rather than refused by Relay');
  t.equal(res.status, 400, res.text);
  t.equal(JSON.parse(res.text).error.code, 'context_length_exceeded', "the upstream's own answer");
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-short', outcome: 'context_window_exceeded' }, { model: 'cw-tiny' }]);
  await setFallbacks(short, []);
});

t.test("near the window, Anthropic's count_tokens decides: over it goes to the fallback, under it stays", async (t) => {
  const { countUp, counted } = await nearWindowModel('cw-counted', 'anthropic');
  // ~3,600 bytes: ~900 tokens by bytes/4, near a window of 1,000 but not clearly over it.
  const body = { model: 'cw-counted', max_tokens: 64, system: 'be brief', messages: [{ role: 'user', content: 'lorem ipsum '.repeat(290) }] };
  const isCount = (path: string) => path === '/v1/messages/count_tokens';

  countUp.enqueue({ status: 200, body: { input_tokens: 1500 } }, { path: '/v1/messages/count_tokens' });
  const over = await viaRelay(relay, '/vendor-b/v1/messages', counted.relayKey, body);
  t.equal(over.status, 200, over.text);
  t.equal(over.headers.get('x-relay-served-model'), 'cw-long', 'counted over the window: the long-context fallback answered');
  t.same(countUp.requests.map((r) => r.pathname), ['/v1/messages/count_tokens'], 'only the count was asked, not the model');
  const sent = countUp.requests[0]!.json;
  t.same(Object.keys(sent).sort(), ['messages', 'model', 'system'], 'count_tokens gets only the members it takes');
  t.equal(countUp.requests[0]!.headers['x-api-key'] !== undefined, true, "with the host key");

  const under = await viaRelay(relay, '/vendor-b/v1/messages', counted.relayKey, body);
  t.equal(under.status, 200, under.text);
  t.equal(under.headers.get('x-relay-served-model'), 'cw-counted', 'counted under the window (12 tokens): the model itself answered');
  t.equal(countUp.requests.filter((r) => isCount(r.pathname)).length, 2);

  const before = countUp.count;
  const small = await viaRelay(relay, '/vendor-b/v1/messages', counted.relayKey, { ...body, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(small.status, 200);
  t.same(countUp.requests.slice(before).map((r) => r.pathname), ['/v1/messages'], 'a prompt far from the window is not counted');
});

t.test('near the window, a server without count_tokens (404): the model itself is asked, and the counter not again', async (t) => {
  const { countUp, counted } = await nearWindowModel('cw-no-counter', 'anthropic');
  const body = { model: 'cw-no-counter', max_tokens: 64, system: 'be brief', messages: [{ role: 'user', content: 'lorem ipsum '.repeat(290) }] };
  countUp.enqueue({ status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } } }, { path: '/v1/messages/count_tokens' });
  for (const turn of ['first', 'second']) {
    const res = await viaRelay(relay, '/vendor-b/v1/messages', counted.relayKey, body);
    t.equal(res.status, 200, res.text);
    t.equal(res.headers.get('x-relay-served-model'), 'cw-no-counter', `${turn}: no count, so the model itself answered`);
  }
  t.same(countUp.requests.map((r) => r.pathname), ['/v1/messages/count_tokens', '/v1/messages', '/v1/messages'], 'the counter asked once, not before the second request');
});

t.test("near the window, a Chat request is counted at OpenAI's counter as the Responses input Relay makes of it", async (t) => {
  const { countUp, counted } = await nearWindowModel('cw-chat-counted', 'openai');
  // ~3,600 bytes: ~900 tokens by bytes/4, near a window of 1,000 but not clearly over it.
  const body = { model: 'cw-chat-counted', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'lorem ipsum '.repeat(290) }] };
  countUp.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 1500 } }, { path: '/v1/responses/input_tokens' });
  const over = await viaRelay(relay, '/vendor-a/v1/chat/completions', counted.relayKey, body);
  t.equal(over.status, 200, over.text);
  t.equal(over.headers.get('x-relay-served-model'), 'cw-long', 'counted over the window: the long-context fallback answered');
  t.same(countUp.requests.map((r) => r.pathname), ['/v1/responses/input_tokens'], 'only the count was asked, not the model');
  t.match(countUp.requests[0]!.json, { instructions: 'be brief', input: [{ role: 'user' }] }, 'Responses input, not Chat messages');
});

t.test('contextWindow is checked on write', async (t) => {
  const bad = await relay.api('PUT', `/api/models/by-id/${short.modelId}`, { spec: { contextWindow: 0 } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /contextWindow/);
});

t.test("without spec.contextWindow, the shipped table's window of the binding's upstream model routes an over-window prompt", async (t) => {
  // The binding sends gpt-4o-2024-08-06: the table knows gpt-4o (128,000 tokens) by its dated name.
  const knownUp = await fake();
  const unknownUp = await fake();
  const known = await seedRoute(relay, { baseUrl: `${knownUp.url}/v1`, adapter: 'openai', model: 'cw-known', upstreamModel: 'gpt-4o-2024-08-06' });
  const unknown = await seedRoute(relay, { baseUrl: `${unknownUp.url}/v1`, adapter: 'openai', model: 'cw-unknown', upstreamModel: 'house-model-7b' });
  for (const s of [known, unknown]) {
    await relay.api('PUT', `/api/policies/by-id/${s.policyId}`, { spec: { modelIds: [s.modelId, long.modelId] } });
  }
  await settled(relay, (s) => [known, unknown].every((x) => s.relayKeys.has(x.relayKeyId) && s.policies.get(x.policyId)?.spec.modelIds.length === 2 && s.hostKeysOfHost(x.hostId).length === 1));
  await setFallbacks(known, [{ modelId: long.modelId, on: ['context_window_exceeded'] }]);
  await setFallbacks(unknown, [{ modelId: long.modelId, on: ['context_window_exceeded'] }]);
  const view = await relay.api<{ spec: { contextWindow?: number } }>('GET', `/api/models/${known.modelId}`);
  t.equal(view.body.spec.contextWindow, undefined, 'the model sets no window of its own');

  const shown = await relay.api<any>('GET', `/api/models/${known.modelId}/context-window`);
  t.equal(shown.status, 200);
  t.match(shown.body, { tokens: 128_000, source: 'table', upstreamModel: 'gpt-4o-2024-08-06', tableModel: 'gpt-4o', sourcePage: /^https:\/\/learn\.microsoft\.com\// }, 'the admin API names the window and its source');
  t.same((await relay.api<any>('GET', '/api/models/cw-unknown/context-window')).body, { tokens: null, source: null });
  t.equal((await relay.api('GET', '/api/models/no-such-model/context-window')).status, 404);

  // ~660 KB of text: ~165,000 tokens by bytes/4, over 1.1 × 128,000.
  const huge = 'lorem ipsum '.repeat(55_000);
  const longBefore = longUp.count;
  const routed = await viaRelay(relay, '/vendor-a/v1/chat/completions', known.relayKey, { model: 'cw-known', messages: [{ role: 'user', content: huge }] });
  t.equal(routed.status, 200, routed.text.slice(0, 300));
  t.equal(routed.headers.get('x-relay-served-model'), 'cw-long');
  t.equal(knownUp.count, 0, 'the 128K model was never called');
  t.equal(longUp.count - longBefore, 1);
  const record = await usageRecord(relay, routed.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'cw-known', outcome: 'context_window_exceeded' }, { model: 'cw-long' }]);

  // The same prompt to a model whose upstream name the table does not know is sent to it.
  const sent = await viaRelay(relay, '/vendor-a/v1/chat/completions', unknown.relayKey, { model: 'cw-unknown', messages: [{ role: 'user', content: huge }] });
  t.equal(sent.status, 200, sent.text.slice(0, 300));
  t.equal(sent.headers.get('x-relay-served-model'), 'cw-unknown', 'no fallback: the model itself answered');
  t.equal(unknownUp.count, 1, 'an unknown model is not window-limited');

  // spec.contextWindow still overrides the table: a larger one lets the same prompt through.
  const put = await relay.api('PUT', `/api/models/by-id/${known.modelId}`, { spec: { contextWindow: 1_000_000 } });
  t.equal(put.status, 200);
  await settled(relay, (s) => s.models.get(known.modelId)?.spec.contextWindow === 1_000_000);
  const own = await viaRelay(relay, '/vendor-a/v1/chat/completions', known.relayKey, { model: 'cw-known', messages: [{ role: 'user', content: huge }] });
  t.equal(own.status, 200, own.text.slice(0, 300));
  t.equal(knownUp.count, 1, "the model's own window decides");
  t.same((await relay.api<any>('GET', `/api/models/${known.modelId}/context-window`)).body, { tokens: 1_000_000, source: 'spec' });
});
