// Answers with several parts crossing shapes: an Anthropic answer with thinking, text and two
// tool calls, to Chat and Responses clients (streamed and not), and an OpenAI Chat answer with
// two parallel tool calls to an Anthropic client. Every frame or body is validated in the
// client's shape; the Responses request leaves the tools' optional `strict` out, as raw HTTP
// callers do, and the echoed tools must still match OpenAI's Response schema.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { openai, sseFrame, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { openapiProblems, responseStreamEventSchema } from '../support/openapi-schemas.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';

const relay = await startRelay();
const anthropicUp = await startFakeUpstream();
const chatUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await anthropicUp.close();
  await chatUp.close();
});
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-up', policy: { modelIds: '*' } });
const chat = await seedRoute(relay, { baseUrl: `${chatUp.url}/v1`, adapter: 'openai', model: 'chat-up', shapes: ['openai.chat'], policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.relayKeys.has(chat.relayKeyId));
const key = claude.relayKey;

const TEXT = 'Checking both.';
const CALLS = [{ id: 'toolu_01A', name: 'lookup', input: { q: 'a' } }, { id: 'toolu_01B', name: 'fetch_page', input: { url: 'https://example.com' } }];
const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body } });

function anthropicStream(model: string): string[] {
  const frames = [
    ev('message_start', { message: { id: 'msg_01parts', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Two lookups are needed.' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: TEXT } }),
    ev('content_block_stop', { index: 1 }),
  ];
  CALLS.forEach((call, i) => {
    const json = JSON.stringify(call.input);
    frames.push(
      ev('content_block_start', { index: 2 + i, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }),
      ev('content_block_delta', { index: 2 + i, delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) } }),
      ev('content_block_delta', { index: 2 + i, delta: { type: 'input_json_delta', partial_json: json.slice(5) } }),
      ev('content_block_stop', { index: 2 + i }),
    );
  });
  frames.push(ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } }), ev('message_stop', {}));
  return frames;
}

function anthropicMessage(model: string): object {
  return {
    id: 'msg_01parts', type: 'message', role: 'assistant', model, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 40 },
    content: [
      { type: 'thinking', thinking: 'Two lookups are needed.', signature: 'c2lnbmF0dXJl' },
      { type: 'text', text: TEXT },
      ...CALLS.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
    ],
  };
}

anthropicUp.script((req) => (req.json?.stream === true
  ? { headers: { 'content-type': 'text/event-stream' }, frames: anthropicStream(String(req.json.model)) }
  : { body: anthropicMessage(String(req.json?.model)) }));

const toolsWithoutStrict = CALLS.map((c) => ({ type: 'function', name: c.name, parameters: { type: 'object' } }));

t.test('Anthropic thinking + text + two tool calls -> Responses client', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'claude-up', stream: true, input: 'go', tools: toolsWithoutStrict });
  const events = sseFrames(got.text).map((f) => JSON.parse(f.data));
  t.same(events.flatMap((e) => openapiProblems(responseStreamEventSchema(e.type), e).map((p) => `${e.type}: ${p}`)), [], 'every event matches the OpenAPI description');
  const done = events.at(-1).response;
  t.equal(events.at(-1).type, 'response.completed');
  t.same(done.output.map((i: { type: string }) => i.type), ['reasoning', 'message', 'function_call', 'function_call']);
  t.same(done.output.slice(2).map((i: { call_id: string; arguments: string }) => [i.call_id, JSON.parse(i.arguments)]), CALLS.map((c) => [c.id, c.input]));

  const whole = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'claude-up', input: 'go', tools: toolsWithoutStrict });
  const body = JSON.parse(whole.text);
  t.same(openapiProblems('Response', body), [], 'not streamed: the response matches the OpenAPI description');
  t.same(body.output.map((i: { type: string }) => i.type), ['reasoning', 'message', 'function_call', 'function_call']);
});

t.test('Anthropic thinking + text + two tool calls -> Chat client: two indexed tool calls', async (t) => {
  const tools = CALLS.map((c) => ({ type: 'function', function: { name: c.name, parameters: { type: 'object' } } }));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'claude-up', stream: true, messages: [{ role: 'user', content: 'go' }], tools });
  const chunks = sseFrames(got.text).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data));
  t.same(chunks.flatMap((c) => openapiProblems('CreateChatCompletionStreamResponse', c)), [], 'every chunk matches the OpenAPI description');
  const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
  for (const c of chunks) {
    for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
      calls[tc.index] ??= { arguments: '' };
      if (tc.id) calls[tc.index]!.id = tc.id;
      if (tc.function?.name) calls[tc.index]!.name = tc.function.name;
      calls[tc.index]!.arguments += tc.function?.arguments ?? '';
    }
  }
  t.same(calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]), CALLS.map((c) => [c.id, c.name, c.input]));
  t.equal(chunks.map((c) => c.choices[0]?.finish_reason).find(Boolean), 'tool_calls');

  const whole = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'claude-up', messages: [{ role: 'user', content: 'go' }], tools });
  const body = JSON.parse(whole.text);
  t.same(openapiProblems('CreateChatCompletionResponse', body), [], 'not streamed: matches the OpenAPI description');
  t.equal(body.choices[0].message.content, TEXT);
  t.same(body.choices[0].message.tool_calls.map((c: { id: string }) => c.id), CALLS.map((c) => c.id));
});

t.test('OpenAI Chat parallel tool calls -> Anthropic client: two tool_use blocks through the SDK stream helper', async (t) => {
  const base = openai.chatChunks({ model: 'chat-up', toolCall: { name: CALLS[0]!.name, input: CALLS[0]!.input, id: 'call_A' }, chunks: 2 });
  const second = openai.chatChunks({ model: 'chat-up', toolCall: { name: CALLS[1]!.name, input: CALLS[1]!.input, id: 'call_B' }, chunks: 2 });
  // The second call's frames, renumbered to tool_calls index 1, before the first call's finish.
  const reindexed = second.slice(0, -2).map((f) => f.replace('"tool_calls":[{"index":0', '"tool_calls":[{"index":1'));
  chatUp.enqueue({ headers: { 'content-type': 'text/event-stream' }, frames: [...base.slice(0, -2), ...reindexed, ...base.slice(-2)] });
  const got = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'chat-up', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'go' }] });
  const message = await sdkFinalMessage(got.text);
  t.same(message.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type)), [['call_A', CALLS[0]!.name, CALLS[0]!.input], ['call_B', CALLS[1]!.name, CALLS[1]!.input]]);
  t.equal(message.stop_reason, 'tool_use');
});

t.test('Anthropic max_tokens -> Responses client: the stream ends with response.incomplete, as the Responses API ends it', async (t) => {
  const cut = anthropicStream('claude-up').slice(0, 8).concat(
    ev('message_delta', { delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 16 } }), ev('message_stop', {}));
  anthropicUp.enqueue({ headers: { 'content-type': 'text/event-stream' }, frames: cut });
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'claude-up', stream: true, input: 'go', max_output_tokens: 16 });
  const events = sseFrames(got.text).map((f) => JSON.parse(f.data));
  t.same(events.flatMap((e) => openapiProblems(responseStreamEventSchema(e.type), e).map((p) => `${e.type}: ${p}`)), [], 'every event matches the OpenAPI description');
  t.equal(events.at(-1).type, 'response.incomplete');
  t.match(events.at(-1).response, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  t.notOk(events.some((e) => e.type === 'response.completed'), 'no response.completed');
});
