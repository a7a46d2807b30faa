// A Chat Completions upstream's custom (freeform) tool call, streamed: OpenAI sends
// `delta.tool_calls[]` with `{index, id, type: "custom", custom: {name, input: ""}}` first, then
// `{index, custom: {input}}` pieces without type or id, numbered with the function calls beside
// it (openai-node's ChatCompletionStream accumulates them so since 6fa9152e, "support custom tool
// calls in parser and ChatCompletionStream"). Relay translates it to a Codex client (Responses)
// as the same custom_tool_call it makes of the whole answer's `tool_calls[].custom`.
import t from 'tap';
import { seedRoute } from '../../core/testing.ts';
import { sseFrame } from '../support/fake-upstream.ts';
import { relayWithUpstream, routeLive, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const { relay, up } = await relayWithUpstream(t);
const chatOnly = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'custom-chat', upstreamModel: 'gpt-5', shapes: ['openai.chat'] });
await routeLive(relay, chatOnly);

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello "world"\n*** End Patch\n';
const LS_ARGS = '{"cmd":"ls"}';
const CHAT = '/v1/chat/completions';

/** The whole answer: a custom call and a function call. */
const WHOLE = {
  id: 'chatcmpl-custom1', object: 'chat.completion', created: 1767225600, model: 'gpt-5',
  choices: [{
    index: 0, logprobs: null, finish_reason: 'tool_calls',
    message: {
      role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [
        { id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: PATCH } },
        { id: 'call_ls', type: 'function', function: { name: 'exec_command', arguments: LS_ARGS } },
      ],
    },
  }],
  usage: { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 },
};

/** The same answer streamed, as OpenAI streams a custom call beside a function call. */
function streamed(): string[] {
  const chunk = (delta: object, finish: string | null = null) => sseFrame({ data: {
    id: 'chatcmpl-custom1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-5',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  } });
  return [
    chunk({ role: 'assistant', content: null, refusal: null, tool_calls: [{ index: 0, id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: '' } }] }),
    chunk({ tool_calls: [{ index: 0, custom: { input: PATCH.slice(0, 20) } }] }),
    chunk({ tool_calls: [{ index: 0, custom: { input: PATCH.slice(20) } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_ls', type: 'function', function: { name: 'exec_command', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: LS_ARGS.slice(0, 5) } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: LS_ARGS.slice(5) } }] }),
    chunk({}, 'tool_calls'),
    sseFrame({ data: { id: 'chatcmpl-custom1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-5', choices: [], usage: WHOLE.usage } }),
    'data: [DONE]\n\n',
  ];
}

const codexTurn = (stream: boolean) => ({
  model: 'custom-chat', stream, store: false,
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Create hello.txt' }] }],
  tools: [
    { type: 'custom', name: 'apply_patch', description: 'Edit files' },
    { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  ],
});

/** A Responses output's tool calls, without their item ids and status. */
const calls = (output: Array<Record<string, unknown>>) => output.map(({ type, call_id, name, input, arguments: args }) => ({ type, call_id, name, input, arguments: args }));

const EXPECTED = [
  { type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: PATCH, arguments: undefined },
  { type: 'function_call', call_id: 'call_ls', name: 'exec_command', input: undefined, arguments: LS_ARGS },
];

t.test('whole: the custom call is a custom_tool_call with its raw input', async (t) => {
  up.enqueue({ body: WHOLE }, { path: CHAT });
  const res = await viaRelay(relay, '/vendor-a/v1/responses', chatOnly.relayKey, codexTurn(false));
  t.equal(res.status, 200, 'answered');
  t.same(calls(JSON.parse(res.text).output), EXPECTED);
});

t.test('streamed: the same calls, its input streamed as custom_tool_call_input deltas', async (t) => {
  up.enqueueStream({ headers: { 'content-type': 'text/event-stream' }, frames: streamed() }, { path: CHAT });
  const res = await viaRelay(relay, '/vendor-a/v1/responses', chatOnly.relayKey, codexTurn(true));
  t.equal(res.status, 200, 'answered');
  const events = sseFrames(res.text).map((f) => JSON.parse(f.data) as Record<string, any>);
  const completed = events.find((e) => e.type === 'response.completed');
  t.same(calls(completed?.response.output ?? []), EXPECTED, 'response.completed has the calls of the whole answer');
  t.same(calls(events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item)), EXPECTED, 'and so do the items as they end');
  const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta').map((e) => e.delta as string);
  t.equal(deltas.join(''), PATCH, 'the input deltas add up to the patch');
  t.ok(deltas.length >= 2, 'streamed in pieces, as it came');
});
