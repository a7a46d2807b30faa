// Token counting for translated models (issue 44 item 5): Anthropic's count_tokens on a model bound
// to OpenAI is counted by OpenAI's /v1/responses/input_tokens, and OpenAI's input_tokens on a
// model bound to Anthropic by Anthropic's count_tokens; a model whose upstream has no counter is a
// 404, never a generation. The official SDKs are the clients; the fake upstreams record requests.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type RecordedRequest } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const relay = await startRelay();
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream({ inputTokens: 31 });
const chatUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
  await chatUp.close();
});
// OpenAI's counter: {"object":"response.input_tokens","input_tokens":N}.
openaiUp.script((req: RecordedRequest) => req.pathname === '/v1/responses/input_tokens'
  ? { body: { object: 'response.input_tokens', input_tokens: 42 } }
  : undefined);

const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'count-gpt', policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'count-claude', policy: { modelIds: '*' } });
const chatOnly = await seedRoute(relay, { baseUrl: `${chatUp.url}/v1`, adapter: 'openai', model: 'count-chat', shapes: ['openai.chat'], policy: { modelIds: '*' } });
await settled(relay, (s) => [gpt, claude, chatOnly].every((r) => s.relayKeys.has(r.relayKeyId)) && s.models.size >= 3);

const anthropic = new Anthropic({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const openai = new OpenAI({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });

t.test('Anthropic count_tokens on an OpenAI-bound model: OpenAI\'s input_tokens counts', async (t) => {
  const counted = await anthropic.messages.countTokens({
    model: 'count-gpt', system: 'Be brief.',
    messages: [{ role: 'user', content: 'How many tokens is this?' }],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  });
  t.same(counted, { input_tokens: 42 });
  const sent = openaiUp.lastRequest()!;
  t.equal(sent.pathname, '/v1/responses/input_tokens');
  t.equal(sent.json.model, 'count-gpt');
  t.equal(sent.json.instructions, 'Be brief.');
  t.match(JSON.stringify(sent.json.input), /How many tokens is this\?/);
  t.match(sent.json.tools, [{ type: 'function', name: 'get_weather' }]);
  t.notOk('max_output_tokens' in sent.json || 'stream' in sent.json || 'store' in sent.json, 'only what the counter takes');
});

t.test('OpenAI input_tokens on an Anthropic-bound model: Anthropic\'s count_tokens counts', async (t) => {
  const counted = await openai.responses.inputTokens.count({ model: 'count-claude', instructions: 'Be brief.', input: 'Count me.' });
  t.same(counted, { object: 'response.input_tokens', input_tokens: 31 });
  const sent = anthropicUp.lastRequest()!;
  t.equal(sent.pathname, '/v1/messages/count_tokens');
  t.match(sent.json, { model: 'count-claude', system: [{ type: 'text', text: 'Be brief.' }] });
  t.match(JSON.stringify(sent.json.messages), /Count me\./);
  t.notOk('max_tokens' in sent.json || 'stream' in sent.json, 'only what the counter takes');
});

t.test('same-shape counting passes through', async (t) => {
  t.same(await openai.responses.inputTokens.count({ model: 'count-gpt', input: 'hi' }), { object: 'response.input_tokens', input_tokens: 42 });
  t.equal(openaiUp.lastRequest()!.pathname, '/v1/responses/input_tokens');
  t.same(await anthropic.messages.countTokens({ model: 'count-claude', messages: [{ role: 'user', content: 'hi' }] }), { input_tokens: 31 });
});

t.test('an upstream without a counter (Chat-only) is a 404 in the client\'s shape, and nothing is generated', async (t) => {
  const before = chatUp.count;
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages/count_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': gpt.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'count-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 404);
  t.match(await res.json(), { type: 'error', error: { type: 'not_found_error' } });
  const openaiShaped = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses/input_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gpt.relayKey}` },
    body: JSON.stringify({ model: 'count-chat', input: 'hi' }),
  });
  t.equal(openaiShaped.status, 404);
  t.match(await openaiShaped.json(), { error: { type: 'not_found_error' } });
  t.equal(chatUp.count, before, 'no generation was asked for');
});

t.test('a count is not billed: its usage event has no tokens', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages/count_tokens`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': gpt.relayKey, 'anthropic-version': '2023-06-01', 'x-request-id': 'count-billing-1' },
    body: JSON.stringify({ model: 'count-gpt', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  const requestId = res.headers.get('x-request-id')!;
  let event: any = null;
  for (let i = 0; i < 100 && !event; i++) {
    const logs = await relay.api<any>('GET', `/api/logs/${requestId}`);
    if (logs.status === 200) event = logs.body;
    else await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(event, 'the request is logged');
  t.equal(event?.input_tokens ?? event?.event?.input_tokens, 0, 'no input tokens billed');
});
