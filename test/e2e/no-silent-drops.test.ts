// No silent drops (issue 44 item 3): what carries content, a conversation reference or a tool
// is mapped or refused on a translated route, never dropped. Chat and Responses clients against
// an Anthropic upstream that records what it receives.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
const chatUp = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await up.close(); await chatUp.close(); });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'nodrop-claude' });
const chatOnly = await seedRoute(relay, { baseUrl: `${chatUp.url}/v1`, adapter: 'openai', model: 'nodrop-chat', shapes: ['openai.chat'] });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.relayKeys.has(chatOnly.relayKeyId));

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}
const chat = (body: Record<string, unknown>) => post('/vendor-a/v1/chat/completions', { model: 'nodrop-claude', ...body });
const user = [{ role: 'user', content: 'hi' }];
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

t.test('refused with a 400 naming what, and nothing reaches the upstream', async (t) => {
  const before = up.count;
  const cases: Array<[string, Promise<{ status: number; json: any }>, RegExp]> = [
    ['Chat n above 1', chat({ n: 2, messages: user }), /n = 2/],
    ['Chat deprecated functions', chat({ functions: [{ name: 'f', parameters: {} }], messages: user }), /deprecated function calling \(functions\)/],
    ['Chat role function message', chat({ messages: [...user, { role: 'function', name: 'f', content: '1' }] }), /deprecated function calling \(\/messages\/1\)/],
    ['Chat assistant function_call', chat({ messages: [...user, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, ...user] }), /function_call/],
    ['Chat image in a system message', chat({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: PNG } }] }, ...user] }), /image_url part at \/messages\/0\/content\/0/],
    ['Chat image in an assistant message', chat({ messages: [...user, { role: 'assistant', content: [{ type: 'image_url', image_url: { url: PNG } }] }, ...user] }), /image_url part at \/messages\/1\/content\/0/],
    ['Chat unknown user part', chat({ messages: [{ role: 'user', content: [{ type: 'video_url', video_url: 'x' }] }] }), /video_url part/],
    ['Responses conversation', post('/vendor-a/v1/responses', { model: 'nodrop-claude', conversation: 'conv_1', input: 'hi' }), /conversation/],
    ['Responses file in a tool output', post('/vendor-a/v1/responses', { model: 'nodrop-claude', input: [
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=' }] },
    ] }), /input_file part at \/input\/1\/output\/0/],
    ['Responses prompt', post('/vendor-a/v1/responses', { model: 'nodrop-claude', prompt: { id: 'pmpt_1' }, input: 'hi' }), /prompt/],
  ];
  for (const [name, pending, message] of cases) {
    const res = await pending;
    t.equal(res.status, 400, `${name}: 400`);
    t.match(res.json.error?.message, message, `${name}: names it`);
  }
  t.equal(up.count, before, 'the upstream saw none of them');
});

t.test('an image in a Chat tool message is kept: the tool result carries it', async (t) => {
  const res = await chat({ messages: [
    ...user,
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'here it is' }, { type: 'image_url', image_url: { url: PNG } }] },
  ], tools: [{ type: 'function', function: { name: 'screenshot', parameters: { type: 'object' } } }] });
  t.equal(res.status, 200);
  const messages = up.lastRequest()!.json.messages;
  const result = messages[2].content[0];
  t.equal(result.type, 'tool_result');
  t.match(result.content, [{ type: 'text', text: 'here it is' }, { type: 'image', source: { type: 'base64', media_type: 'image/png' } }]);
});

t.test('n = 1 is served (one choice is what it asks for) and named in x-relay-dropped', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
    body: JSON.stringify({ model: 'nodrop-claude', n: 1, messages: user }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-dropped'), 'n');
  await res.arrayBuffer();
});

t.test('an image in a Messages tool_result reaches a Chat upstream (in a user message after the tool message)', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': chatOnly.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'nodrop-chat', max_tokens: 50, tools: [{ name: 'screenshot', input_schema: { type: 'object' } }], messages: [
      { role: 'user', content: 'take one' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'done' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }] },
    ] }),
  });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const messages = chatUp.lastRequest()!.json.messages;
  t.match(messages[2], { role: 'tool', tool_call_id: 'toolu_1', content: 'done' });
  t.equal(messages[3].role, 'user');
  t.match(messages[3].content, [{ type: 'text', text: /toolu_1/ }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }]);
});
