// Tool-call deltas without `index` (plugins/vendor-openai/codec/chat-stream.ts). OpenAI numbers
// every delta of choices[0].delta.tool_calls; some OpenAI-compatible servers (Gemini's OpenAI
// endpoint, self-hosted ones) leave the index out. Then a delta whose id differs from the open
// call's starts a new call, and one without id continues the open call; streams with an index
// are read as before.
import t from 'tap';
import { collect, decodeStream } from '../translation/harness.ts';

type ToolDelta = { index?: number; id?: string; type?: 'function'; function: { name?: string; arguments?: string } };

/** A Chat Completions stream whose chunks carry the given tool-call deltas, then finish. */
function stream(deltas: ToolDelta[][]): string {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return chunk({ role: 'assistant', content: null })
    + deltas.map((tool_calls) => chunk({ tool_calls })).join('')
    + chunk({}, 'tool_calls')
    + 'data: [DONE]\n\n';
}

/** The tool-call parts the decoder makes of a stream (every other part is left out). */
const toolCalls = (sse: string) => collect(decodeStream('openai.chat', sse)).content.filter((p) => p.type === 'tool_call');

// call_a and call_b as Gemini's endpoint sends them: each call whole, in one delta, no index.
const start = (id: string, name: string, args: string, index?: number): ToolDelta =>
  ({ ...(index === undefined ? {} : { index }), id, type: 'function', function: { name, arguments: args } });
const more = (args: string, index?: number): ToolDelta => ({ ...(index === undefined ? {} : { index }), function: { arguments: args } });

const TWO_CALLS = [
  { type: 'tool_call', id: 'call_a', name: 'get_x', arguments: '{"x":1}', tool_kind: 'function' },
  { type: 'tool_call', id: 'call_b', name: 'get_y', arguments: '{"y":2}', tool_kind: 'function' },
];

t.test('two parallel calls without index are two calls with their own arguments', async (t) => {
  t.same(toolCalls(stream([[start('call_a', 'get_x', '{"x":1}')], [start('call_b', 'get_y', '{"y":2}')]])), TWO_CALLS);
  // Both in the same chunk.
  t.same(toolCalls(stream([[start('call_a', 'get_x', '{"x":1}'), start('call_b', 'get_y', '{"y":2}')]])), TWO_CALLS);
});

t.test('one call without index split over several deltas (id on the first only) is one call', async (t) => {
  const sse = stream([[start('call_a', 'get_x', '')], [more('{"x"')], [more(':1')], [more('}')]]);
  t.same(toolCalls(sse), [{ type: 'tool_call', id: 'call_a', name: 'get_x', arguments: '{"x":1}', tool_kind: 'function' }]);
});

t.test('split calls without index, one after the other, stay apart', async (t) => {
  const sse = stream([
    [start('call_a', 'get_x', '{"x"')], [more(':1}')],
    [start('call_b', 'get_y', '{"y"')], [more(':2}')],
  ]);
  t.same(toolCalls(sse), TWO_CALLS);
});

t.test('the same calls with index are read as before', async (t) => {
  t.same(toolCalls(stream([[start('call_a', 'get_x', '{"x":1}', 0)], [start('call_b', 'get_y', '{"y":2}', 1)]])), TWO_CALLS);
  t.same(toolCalls(stream([
    [start('call_a', 'get_x', '{"x"', 0)], [more(':1}', 0)],
    [start('call_b', 'get_y', '{"y"', 1)], [more(':2}', 1)],
  ])), TWO_CALLS);
  // With an index, the index decides, not the id: a repeated id on a continuation of index 0
  // (some servers repeat it) and a second call's delta carrying index 1 without id.
  t.same(toolCalls(stream([
    [start('call_a', 'get_x', '{"x"', 0)], [{ index: 0, id: 'call_a', function: { arguments: ':1}' } }],
    [{ index: 1, function: { name: 'get_y', arguments: '{"y":2}' } }],
  ])), [TWO_CALLS[0], { ...TWO_CALLS[1], id: '' }]);
});
