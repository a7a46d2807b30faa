// A tool call Anthropic streams without arguments (input {} and at most an empty partial_json)
// decodes to arguments "{}", as the non-streamed answer does; OpenAI-shaped clients JSON.parse
// them. Calls that stream their arguments, and custom tools (raw text input), get nothing added.
import t from 'tap';
import { messagesStreamDecoder } from '../../plugins/vendor-anthropic/codec/messages-stream.ts';
import type { CanonicalRequest, StreamEvent } from '../../core/plugin-api/canonical.ts';
import type { Route } from '../../core/plugin-api.ts';

const route = { upstreamModel: 'claude' } as Route;
const start = '{"type":"message_start","message":{"id":"msg_1","model":"claude","usage":{"input_tokens":5,"output_tokens":1}}}';
const toolStart = (index: number, name: string, input = '{}') => `{"type":"content_block_start","index":${index},"content_block":{"type":"tool_use","id":"toolu_${index}","name":"${name}","input":${input}}}`;
const json = (index: number, partial: string) => JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } });
const stop = (index: number) => `{"type":"content_block_stop","index":${index}}`;
const end = ['{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}', '{"type":"message_stop"}'];

function argumentsOf(frames: string[], request?: CanonicalRequest): string[] {
  const decoder = messagesStreamDecoder(route, request);
  const events: StreamEvent[] = frames.flatMap((f) => decoder.decode(undefined, f));
  const calls = new Map<number, string>();
  for (const e of events) {
    if (e.type === 'part_start' && e.part.type === 'tool_call') calls.set(e.index, '');
    if (e.type === 'delta' && e.delta.type === 'arguments') calls.set(e.index, calls.get(e.index)! + e.delta.text);
  }
  return [...calls.values()];
}

t.test('a call without arguments gets "{}"', async (t) => {
  t.same(argumentsOf([start, toolStart(0, 'now'), stop(0), ...end]), ['{}'], 'no delta at all');
  t.same(argumentsOf([start, toolStart(0, 'now'), json(0, ''), stop(0), ...end]), ['{}'], 'one empty partial_json');
  t.same(argumentsOf([start, toolStart(0, 'now'), toolStart(1, 'today'), stop(0), stop(1), ...end]), ['{}', '{}'], 'parallel calls each');
});

t.test('calls with arguments, and custom tools, are left as they are', async (t) => {
  t.same(argumentsOf([start, toolStart(0, 'ls'), json(0, '{"path":'), json(0, '"."}'), stop(0), ...end]), ['{"path":"."}']);
  t.same(argumentsOf([start, toolStart(0, 'ls', '{"path":"."}'), stop(0), ...end]), ['{"path":"."}'], 'input given at the start');
  const custom = { model: 'm', messages: [], tools: [{ type: 'custom', name: 'apply_patch' }] } as unknown as CanonicalRequest;
  // A custom tool's input is buffered and unwrapped at its stop (unwrapCustomInput): nothing is added to it.
  t.same(argumentsOf([start, toolStart(0, 'apply_patch'), json(0, '{"input":"*** Begin Patch"}'), stop(0), ...end], custom), ['*** Begin Patch']);
  t.same(argumentsOf([start, toolStart(0, 'apply_patch'), stop(0), ...end], custom), [''], 'an empty custom input is the empty text, as on every path');
});
