// Issue 38 item 2: a Chat Completions upstream that interleaves the deltas of its parallel tool
// calls (tool_calls[0], then [1], then [0] again) gives every client two whole calls, not three
// with the last one nameless. Real Relay, a fake upstream speaking real SSE; the Messages answer
// goes through the official SDK's stream helper.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const chunk = (delta: unknown, finish: string | null = null) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'chat-up', choices: [{ index: 0, delta, finish_reason: finish }] });
const INTERLEAVED = [
  chunk({ role: 'assistant', content: null }),
  chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_x', arguments: '{"x"' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_y', arguments: '{"y":2}' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
  chunk({}, 'tool_calls'),
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'chat-up', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
  '[DONE]',
].map((data) => `data: ${data}\n\n`);
up.script(() => ({ headers: { 'content-type': 'text/event-stream' }, frames: INTERLEAVED }));

const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'chat-up', shapes: ['openai.chat'] });
await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && [...s.models.values()].some((m) => m.metadata.slug === 'chat-up'));
const key = seeded.relayKey;
const tools = [{ name: 'get_x' }, { name: 'get_y' }];
const datas = (text: string) => sseFrames(text).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data));

t.test('Messages client: two tool_use blocks with whole inputs', async (t) => {
  const got = await viaRelay(relay, '/vendor-b/v1/messages', key, {
    model: 'chat-up', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'go' }],
    tools: tools.map((x) => ({ ...x, input_schema: { type: 'object' } })),
  });
  t.equal(got.status, 200);
  const message = await sdkFinalMessage(got.text);
  t.same(message.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type)), [
    ['call_a', 'get_x', { x: 1 }],
    ['call_b', 'get_y', { y: 2 }],
  ]);
  t.equal(message.stop_reason, 'tool_use');
});

t.test('Responses client: two function_call items with whole arguments', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, {
    model: 'chat-up', stream: true, input: 'go', tools: tools.map((x) => ({ type: 'function', ...x, parameters: { type: 'object' } })),
  });
  t.equal(got.status, 200);
  const completed = datas(got.text).find((d) => d.type === 'response.completed');
  t.same(completed.response.output.map((i: any) => [i.type, i.call_id, i.name, i.arguments]), [
    ['function_call', 'call_a', 'get_x', '{"x":1}'],
    ['function_call', 'call_b', 'get_y', '{"y":2}'],
  ]);
  const done = datas(got.text).filter((d) => d.type === 'response.function_call_arguments.done').map((d) => d.arguments);
  t.same(done, ['{"x":1}', '{"y":2}'], 'each call says its arguments are done once');
});

t.test('canonical client: two tool_call parts', async (t) => {
  const got = await viaRelay(relay, '/v1/generate', key, {
    model: 'chat-up', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
    tools: tools.map((x) => ({ type: 'function', ...x })),
  });
  t.equal(got.status, 200);
  const events = datas(got.text);
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (const ev of events) {
    if (ev.type === 'part_start' && ev.part.type === 'tool_call') calls.set(ev.index, { id: ev.part.id, name: ev.part.name, arguments: '' });
    if (ev.type === 'delta' && ev.delta.type === 'arguments') calls.get(ev.index)!.arguments += ev.delta.text;
  }
  t.same([...calls.values()], [{ id: 'call_a', name: 'get_x', arguments: '{"x":1}' }, { id: 'call_b', name: 'get_y', arguments: '{"y":2}' }]);
  t.equal(events.filter((e) => e.type === 'part_end').length, 2, 'each part ends once');
});
