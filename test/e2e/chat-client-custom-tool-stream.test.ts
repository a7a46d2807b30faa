// A Chat Completions client's custom (freeform) tool call, streamed by Relay from another vendor's
// answer: written as OpenAI streams it, `{index, id, type: "custom", custom: {name, input: ""}}`
// then `{index, custom: {input}}` pieces (openai-node's ChatCompletionChunk types and
// ChatCompletionStream accumulator since 6fa9152e), so that the pieces add up to the whole
// answer's `tool_calls[]` entry `{id, type: "custom", custom: {name, input}}`. Here the upstream
// is an OpenAI Responses one answering a native custom_tool_call.
import t from 'tap';
import { seedRoute } from '../../core/testing.ts';
import { responsesCustomToolCall } from '../support/agent-turns.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { relayWithUpstream, routeLive, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const { relay, up } = await relayWithUpstream(t);
const responsesOnly = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'custom-responses', upstreamModel: 'gpt-5', shapes: ['openai.responses'] });
await routeLive(relay, responsesOnly);

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello "world"\n*** End Patch\n';
const FRAMES = responsesCustomToolCall({ model: 'gpt-5', name: 'apply_patch', input: PATCH, callId: 'call_patch' });
/** The whole answer: the response that the stream's response.completed carries. */
const WHOLE = (JSON.parse(sseFrames(FRAMES.join('')).at(-1)!.data) as { response: object }).response;

const chatTurn = (stream: boolean) => ({
  model: 'custom-responses', stream,
  messages: [{ role: 'user', content: 'Create hello.txt' }],
  tools: [{ type: 'custom', custom: { name: 'apply_patch', description: 'Edit files' } }],
});

interface ToolDelta { index: number; id?: string; type?: string; function?: { name?: string; arguments?: string }; custom?: { name?: string; input?: string } }

/** The streamed calls put together by index, as openai-node's ChatCompletionStream does. */
function accumulate(deltas: ToolDelta[]): Array<Record<string, any>> {
  const calls: Array<Record<string, any>> = [];
  for (const d of deltas) {
    const call = (calls[d.index] ??= {});
    if (d.id) call.id = d.id;
    if (d.type) call.type = d.type;
    if (d.custom) {
      call.custom ??= { name: '', input: '' };
      if (d.custom.name) call.custom.name = d.custom.name;
      call.custom.input += d.custom.input ?? '';
    }
    if (d.function) {
      call.function ??= { name: '', arguments: '' };
      if (d.function.name) call.function.name = d.function.name;
      call.function.arguments += d.function.arguments ?? '';
    }
  }
  return calls;
}

t.test('whole: the call is a tool_calls entry of type custom', async (t) => {
  up.enqueue({ body: WHOLE }, { path: '/v1/responses' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', responsesOnly.relayKey, chatTurn(false));
  t.equal(res.status, 200, 'answered');
  t.same(JSON.parse(res.text).choices[0].message.tool_calls, [{ id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: PATCH } }]);
});

t.test('streamed: custom pieces that add up to the whole answer\'s call', async (t) => {
  up.enqueueStream({ headers: { 'content-type': 'text/event-stream' }, frames: FRAMES }, { path: '/v1/responses' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', responsesOnly.relayKey, chatTurn(true));
  t.equal(res.status, 200, 'answered');
  const chunks = sseFrames(res.text).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data) as { choices: Array<{ delta: { tool_calls?: ToolDelta[] } }> });
  t.same(chunks.flatMap((c, i) => openapiProblems('CreateChatCompletionStreamResponse', c).map((p) => `chunk ${i}: ${p}`)), [], 'every chunk matches the description (with its streamed custom call)');
  const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
  t.same(deltas[0], { index: 0, id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: '' } }, 'the call opens as OpenAI opens a custom call');
  t.ok(deltas.slice(1).every((d) => d.type === undefined && d.id === undefined && d.function === undefined && typeof d.custom?.input === 'string'), 'later pieces carry custom.input only');
  t.same(accumulate(deltas), [{ id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: PATCH } }], 'they add up to the whole answer\'s call');
});
