// A content-filter stop inside a stream, before any output reached the client, moves the request to
// the next fallback taking content_filter (issue 42), as an upstream's 400 content_filter does:
// OpenAI Chat's finish_reason "content_filter" with no content, Responses' response.incomplete for
// content_filter, Anthropic's stop_reason "refusal" before any content block; passthrough and
// translated. Without such a fallback, or once output flowed, the client gets the stream as sent.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, parseSse, type FakeUpstream, type SseFrame } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ logLevel: 'warn' });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});
async function fake(): Promise<FakeUpstream> {
  const up = await startFakeUpstream();
  upstreams.push(up);
  return up;
}

const gptUp = await fake();
const claudeUp = await fake();
const spareUp = await fake();
const gpt = await seedRoute(relay, { baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'sf-gpt' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'sf-claude' });
const spare = await seedRoute(relay, { baseUrl: `${spareUp.url}/v1`, adapter: 'openai', model: 'sf-spare' });
for (const s of [gpt, claude]) {
  const res = await relay.api('PUT', `/api/policies/by-id/${s.policyId}`, { spec: { modelIds: [gpt.modelId, claude.modelId, spare.modelId] } });
  if (res.status !== 200) throw new Error(`policy: ${res.status}`);
}
type Fallbacks = Array<{ modelId: string; on?: string[] }>;
async function setFallbacks(model: Seeded, fallbacks: Fallbacks): Promise<void> {
  const res = await relay.api('PUT', `/api/models/by-id/${model.modelId}`, { spec: { fallbacks } });
  if (res.status !== 200) throw new Error(`setting fallbacks: ${res.status} ${JSON.stringify(res.body)}`);
  const summary = (list: Fallbacks | undefined) => JSON.stringify((list ?? []).map((f) => [f.modelId, f.on ?? null]));
  await settled(relay, (s) => summary(s.models.get(model.modelId)?.spec.fallbacks) === summary(fallbacks));
}
await settled(relay, (s) => [gpt, claude].every((x) => s.relayKeys.has(x.relayKeyId) && s.policies.get(x.policyId)?.spec.modelIds.length === 3)
  && [gpt, claude, spare].every((x) => s.hostKeysOfHost(x.hostId).length === 1));

const chunk = (delta: object, finish: string | null = null): SseFrame => ({
  data: { id: 'chatcmpl-f', object: 'chat.completion.chunk', created: 1767225600, model: 'sf-gpt', choices: [{ index: 0, delta, finish_reason: finish }] },
});
const DONE: SseFrame = { data: '[DONE]' };
const chatFiltered = [chunk({ role: 'assistant', content: '' }), chunk({}, 'content_filter'), DONE];
const chatStream = { model: 'sf-gpt', stream: true, messages: [{ role: 'user', content: 'hi' }] };

async function attemptsOf(requestId: string): Promise<unknown> {
  return JSON.parse((await usageRecord(relay, requestId)).extras.relay_model_attempts);
}

t.test("Chat passthrough: finish_reason content_filter before any content moves to the fallback", async (t) => {
  await setFallbacks(gpt, [{ modelId: spare.modelId, on: ['content_filter'] }]);
  gptUp.enqueueStream({ frames: chatFiltered });
  const spareBefore = spareUp.count;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatStream);
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'sf-spare');
  t.equal(spareUp.count - spareBefore, 1);
  const frames = parseSse(res.text);
  t.notOk(frames.some((f) => f.data.includes('content_filter')), 'the client never saw the filtered stream');
  t.ok(frames.some((f) => f.data.includes('fake upstream')), "the fallback's answer streamed");
  t.same(await attemptsOf(res.headers.get('x-request-id')!), [{ model: 'sf-gpt', outcome: 'content_filter' }, { model: 'sf-spare' }]);
});

t.test('Chat: without a fallback taking content_filter, or after content, the client gets the stream as sent', async (t) => {
  await setFallbacks(gpt, [{ modelId: spare.modelId, on: ['server_error'] }]);
  gptUp.enqueueStream({ frames: chatFiltered });
  const spareBefore = spareUp.count;
  const kept = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatStream);
  t.equal(kept.status, 200);
  t.equal(kept.headers.get('x-relay-served-model'), 'sf-gpt');
  t.match(kept.text, /"finish_reason":"content_filter"/);
  t.equal(spareUp.count, spareBefore, 'the fallback was not called');

  await setFallbacks(gpt, [{ modelId: spare.modelId, on: ['content_filter'] }]);
  gptUp.enqueueStream({ frames: [chunk({ role: 'assistant', content: 'Part of an answer' }), chunk({}, 'content_filter'), DONE] });
  const late = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatStream);
  t.equal(late.headers.get('x-relay-served-model'), 'sf-gpt', 'output already flowed: no fallback');
  t.match(late.text, /Part of an answer/);
  t.match(late.text, /"finish_reason":"content_filter"/);
  t.equal(spareUp.count, spareBefore);
});

t.test('Responses passthrough: response.incomplete for content_filter before output moves to the fallback', async (t) => {
  await setFallbacks(gpt, [{ modelId: spare.modelId, on: ['content_filter'] }]);
  const response = { id: 'resp_f', object: 'response', created_at: 1767225600, model: 'sf-gpt', output: [] };
  gptUp.enqueueStream({ frames: [
    { event: 'response.created', data: { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } } },
    { event: 'response.in_progress', data: { type: 'response.in_progress', sequence_number: 1, response: { ...response, status: 'in_progress' } } },
    { event: 'response.incomplete', data: { type: 'response.incomplete', sequence_number: 2, response: { ...response, status: 'incomplete', incomplete_details: { reason: 'content_filter' } } } },
  ] });
  const res = await viaRelay(relay, '/vendor-a/v1/responses', gpt.relayKey, { model: 'sf-gpt', stream: true, input: 'hi' });
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'sf-spare');
  t.notMatch(res.text, /content_filter/);
  t.match(res.text, /response\.completed/);
  t.same(await attemptsOf(res.headers.get('x-request-id')!), [{ model: 'sf-gpt', outcome: 'content_filter' }, { model: 'sf-spare' }]);
});

const refusal: SseFrame[] = [
  { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_f', type: 'message', role: 'assistant', model: 'sf-claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 1 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
];
const messagesStream = (model: string) => ({ model, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });

t.test("Messages passthrough: Anthropic's stop_reason refusal before any content moves to an OpenAI fallback, in the Messages shape", async (t) => {
  await setFallbacks(claude, [{ modelId: spare.modelId, on: ['content_filter'] }]);
  claudeUp.enqueueStream({ frames: refusal });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messagesStream('sf-claude'));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'sf-spare');
  const events = parseSse(res.text).map((f) => f.event);
  t.equal(events[0], 'message_start');
  t.ok(events.includes('content_block_delta'), "the fallback's text, translated to Messages");
  t.notMatch(res.text, /"refusal"/);
  t.same(await attemptsOf(res.headers.get('x-request-id')!), [{ model: 'sf-claude', outcome: 'content_filter' }, { model: 'sf-spare' }]);
});

t.test('translated: a Messages request to an OpenAI model whose Chat stream is filtered before content moves on', async (t) => {
  await setFallbacks(gpt, [{ modelId: claude.modelId, on: ['content_filter'] }]);
  gptUp.enqueueStream({ frames: chatFiltered });
  const claudeBefore = claudeUp.count;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', gpt.relayKey, messagesStream('sf-gpt'));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'sf-claude');
  t.equal(claudeUp.count - claudeBefore, 1);
  t.notMatch(res.text, /"refusal"|content_filter/);
  t.same(await attemptsOf(res.headers.get('x-request-id')!), [{ model: 'sf-gpt', outcome: 'content_filter' }, { model: 'sf-claude' }]);

  // The same stream cut after its finish_reason (no [DONE]) is read as filtered too.
  gptUp.enqueueStream({ frames: chatFiltered.slice(0, 2), then: 'end' });
  const cut = await viaRelay(relay, '/vendor-b/v1/messages', gpt.relayKey, messagesStream('sf-gpt'));
  t.equal(cut.status, 200, cut.text);
  t.equal(cut.headers.get('x-relay-served-model'), 'sf-claude');
});
