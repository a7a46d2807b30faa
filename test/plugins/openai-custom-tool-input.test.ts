// A custom tool call's input from an OpenAI(-compatible) upstream that is not a string: Chat's
// `custom.input` went through String() ("[object Object]") and Responses' custom_tool_call
// `input` (and function_call `arguments`) became "". They are read as tool-call arguments are
// (toolArgumentsText): a string as is, an object (or array) as its JSON text, nothing as "",
// another value named `tool_call.arguments`.
import t from 'tap';
import type { Route } from '../../core/plugin-api.ts';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import * as openai from '../../plugins/vendor-openai/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { collect } from '../translation/harness.ts';

const chatAnswer = (tool_calls: unknown[]) => ({ id: 'c1', model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 3, completion_tokens: 9 } });
const customCall = (id: string, input: unknown) => ({ id, type: 'custom', custom: { name: 'apply_patch', input } });
const BASE: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
const argsOf = (content: Array<{ type: string; arguments?: string }>) => content.map((p) => p.type === 'tool_call' && p.arguments);

t.test('Chat: a custom tool call\'s input', async (t) => {
  const dropped: string[] = [];
  const response = openai.decodeResponse('openai.chat', chatAnswer([
    customCall('a', '*** Begin Patch'), customCall('b', { patch: 'x' }), customCall('c', ['x']), customCall('d', undefined), customCall('e', 42),
  ]), fakeRoute() as Route, BASE, dropped);
  t.same(argsOf(response.content), ['*** Begin Patch', '{"patch":"x"}', '["x"]', '', '']);
  t.same(response.content.map((p) => p.type === 'tool_call' && p.tool_kind), ['custom', 'custom', 'custom', 'custom', 'custom']);
  t.same(dropped, ['tool_call.arguments'], 'the number is named');
});

const responsesAnswer = (output: unknown[]) => ({ id: 'resp_1', object: 'response', model: 'gpt-test', status: 'completed', output, usage: { input_tokens: 3, output_tokens: 5 } });
const items = [
  { type: 'custom_tool_call', id: 'ctc_1', call_id: 'a', name: 'apply_patch', input: '*** Begin Patch' },
  { type: 'custom_tool_call', id: 'ctc_2', call_id: 'b', name: 'apply_patch', input: { patch: 'x' } },
  { type: 'custom_tool_call', id: 'ctc_3', call_id: 'c', name: 'apply_patch', input: 42 },
  { type: 'function_call', id: 'fc_1', call_id: 'd', name: 'lookup', arguments: { q: 'x' } },
];
const expected = ['*** Begin Patch', '{"patch":"x"}', '', '{"q":"x"}'];

t.test('Responses: a custom_tool_call\'s input (and a function_call\'s arguments), whole', async (t) => {
  const dropped: string[] = [];
  const response = openai.decodeResponse('openai.responses', responsesAnswer(items), fakeRoute() as Route, BASE, dropped);
  t.same(argsOf(response.content), expected);
  t.same(dropped, ['tool_call.arguments']);
});

t.test('Responses: the same given whole in output_item.done of a stream (no deltas)', async (t) => {
  const dropped: string[] = [];
  const decoder = openai.streamDecoder('openai.responses', fakeRoute() as Route, BASE, dropped);
  const frames = [
    { type: 'response.created', response: { ...responsesAnswer([]), status: 'in_progress' } },
    ...items.flatMap((item, i) => [
      { type: 'response.output_item.added', output_index: i, item: { ...item, input: undefined, arguments: undefined } },
      { type: 'response.output_item.done', output_index: i, item },
    ]),
    { type: 'response.completed', response: responsesAnswer(items) },
  ];
  const response = collect(frames.flatMap((f) => decoder.decode(f.type, JSON.stringify(f))));
  t.same(argsOf(response.content), expected);
  t.same(dropped, ['tool_call.arguments']);
});
