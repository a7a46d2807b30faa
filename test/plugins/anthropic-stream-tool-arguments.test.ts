// A tool call Anthropic streams without arguments (input {} and at most an empty partial_json)
// decodes to arguments "{}", as the non-streamed answer does; OpenAI-shaped clients JSON.parse
// them. Calls that stream their arguments, and custom tools (raw text input), get nothing added.
import t from 'tap';
import { messagesStreamDecoder } from '../../plugins/vendor-anthropic/codec/messages-stream.ts';
import type { CanonicalRequest, StreamEvent } from '../../core/plugin-api/canonical.ts';
import type { Route } from '../../core/plugin-api.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';

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

// A start whose input is not {} and that then streams input_json_delta pieces: Anthropic's SDK
// (MessageStream, withLazyInput) replaces the start's input with the parse of the pieces alone
// (an empty buffer is {}), and keeps it only when no piece comes. Relay sent both, concatenated.
const sdkStart = '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}';
/** Frames as an Anthropic endpoint's SSE body. */
const sse = (frames: string[]) => frames.map((f) => `event: ${(JSON.parse(f) as { type: string }).type}\ndata: ${f}\n\n`).join('');

t.test('a non-empty start input is replaced by the deltas, as Anthropic\'s SDK reads it', async (t) => {
  const given = '{"path":"/old"}';
  const cases: Array<[string, string[], string[]]> = [
    ['start + deltas: the deltas only', [toolStart(0, 'ls', given), json(0, '{"path":'), json(0, '"."}'), stop(0)], ['{"path":"."}']],
    ['start, no delta: the start\'s input', [toolStart(0, 'ls', given), stop(0)], [given]],
    ['start + one empty delta: {}', [toolStart(0, 'ls', given), json(0, ''), stop(0)], ['{}']],
    ['parallel calls, each its own', [toolStart(0, 'ls', given), toolStart(1, 'ls'), json(1, '{"path":"b"}'), json(0, '{"path":"a"}'), stop(1), stop(0)], ['{"path":"a"}', '{"path":"b"}']],
  ];
  for (const [label, frames, expected] of cases) {
    t.same(argumentsOf([start, ...frames, ...end]), expected, label);
    // The reference: the SDK's final message read from the same frames.
    const message = await sdkFinalMessage(sse([sdkStart, ...frames, ...end]));
    t.same(message.content.map((b) => (b.type === 'tool_use' ? b.input : null)), expected.map((a) => JSON.parse(a) as unknown), `${label}: as the SDK reads it`);
  }
  t.same(argumentsOf([start, toolStart(0, 'ls', given), ...end]), [given], 'start, the stream ends without the block\'s stop: the start\'s input');
  t.same(argumentsOf([start, toolStart(0, 'ls', JSON.stringify(given)), json(0, '{"path":"."}'), stop(0), ...end]), ['{"path":"."}'], 'a text start input, then deltas');
});

t.test('the same for a custom tool', async (t) => {
  const custom = { model: 'm', messages: [], tools: [{ type: 'custom', name: 'apply_patch' }] } as unknown as CanonicalRequest;
  const given = '{"input":"old patch"}';
  t.same(argumentsOf([start, toolStart(0, 'apply_patch', given), json(0, '{"input":'), json(0, '"new patch"}'), stop(0), ...end], custom), ['new patch'], 'start + deltas: the deltas only');
  t.same(argumentsOf([start, toolStart(0, 'apply_patch', given), stop(0), ...end], custom), ['old patch'], 'start, no delta: the start\'s input');
  t.same(argumentsOf([start, toolStart(0, 'apply_patch', given), json(0, ''), stop(0), ...end], custom), [''], 'start + one empty delta: no input, the empty text');
});

t.test('a web search server_tool_use: the start\'s input only when no delta comes', async (t) => {
  const request = { model: 'm', messages: [], tools: [{ type: 'web_search' }] } as unknown as CanonicalRequest;
  const use = (input: string) => `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":${input}}}`;
  const queryOf = (frames: string[]): unknown => {
    const decoder = messagesStreamDecoder(route, request);
    const part = frames.flatMap((f) => decoder.decode(undefined, f)).find((e) => e.type === 'part_start' && e.part.type === 'web_search_call');
    return part?.type === 'part_start' && part.part.type === 'web_search_call' ? part.part.query : 'no search';
  };
  t.equal(queryOf([start, use('{"query":"old"}'), json(0, '{"query":"new"}'), stop(0), ...end]), 'new', 'start + delta: the delta');
  t.equal(queryOf([start, use('{"query":"old"}'), stop(0), ...end]), 'old', 'start, no delta: the start\'s');
  t.equal(queryOf([start, use('{"query":"old"}'), json(0, ''), stop(0), ...end]), undefined, 'start + one empty delta: no query');
});
