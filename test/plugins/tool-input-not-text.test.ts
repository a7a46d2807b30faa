// A tool call's input that is neither text, an object nor absent (a number, a boolean), from a
// Bedrock Converse, OpenAI(-compatible), Anthropic Messages or Gemini upstream, whole or streamed,
// function or custom tool: every decoder reads it through toolArgumentsText
// (relay-gateway/canonical), names it in x-relay-dropped and treats the call as one without input.
// Anthropic and Gemini passed 42 on as the text "42", unnamed (test/e2e/tool-input-not-object
// does the same over HTTP). A Converse custom tool's input in a
// whole answer went to unwrapCustomInput as it was: 42 came through as the text "42", unnamed,
// while the same streamed was named. null is no input, named nowhere.
import t from 'tap';
import type { Route } from '../../core/plugin-api.ts';
import type { CanonicalRequest, ContentPart, StreamEvent } from '../../core/plugin-api/canonical.ts';
import * as anthropic from '../../plugins/vendor-anthropic/codec/index.ts';
import * as bedrock from '../../plugins/vendor-bedrock/codec/index.ts';
import { decodeGeminiResponse, geminiStreamDecoder } from '../../plugins/vendor-google/codec/index.ts';
import * as openai from '../../plugins/vendor-openai/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { collect } from '../translation/harness.ts';

type Kind = 'function' | 'custom';
interface Read { arguments: string | undefined; tool_kind: string | undefined; dropped: string[] }

const BASE: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
/** Custom calls come back as such only when the request declared the tool custom. */
const requestFor = (kind: Kind): CanonicalRequest => (kind === 'custom' ? { ...BASE, tools: [{ type: 'custom', name: 'apply_patch' }] } : BASE);
const nameFor = (kind: Kind) => (kind === 'custom' ? 'apply_patch' : 'lookup');
const route = () => fakeRoute() as Route;

function readOf(content: ContentPart[], dropped: string[]): Read {
  const call = content.find((p) => p.type === 'tool_call');
  return { arguments: call?.type === 'tool_call' ? call.arguments : undefined, tool_kind: call?.type === 'tool_call' ? call.tool_kind : undefined, dropped };
}

function streamed(decode: (event: string | undefined, data: string) => StreamEvent[], frames: Array<[string | undefined, unknown]>, finish: () => StreamEvent[]): ContentPart[] {
  return collect([...frames.flatMap(([event, data]) => decode(event, typeof data === 'string' ? data : JSON.stringify(data))), ...finish()]).content;
}

/** Each path a tool call's input reaches a decoder by, and how to send `input` down it. */
const PATHS: Record<string, { kinds: Kind[]; name: string; read: (kind: Kind, input: unknown) => Read }> = {
  'Bedrock Converse, whole answer': {
    kinds: ['function', 'custom'], name: 'toolUse.input',
    read: (kind, input) => {
      const dropped: string[] = [];
      const response = bedrock.decodeResponse('bedrock.converse', {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: nameFor(kind), input } }] } },
        stopReason: 'tool_use', usage: { inputTokens: 1, outputTokens: 1 },
      }, route(), requestFor(kind), dropped);
      return readOf(response.content, dropped);
    },
  },
  'Bedrock ConverseStream': {
    kinds: ['function', 'custom'], name: 'toolUse.input',
    read: (kind, input) => {
      const dropped: string[] = [];
      const decoder = bedrock.streamDecoder('bedrock.converse', route(), requestFor(kind), dropped);
      return readOf(streamed((e, d) => decoder.decode(e, d), [
        ['messageStart', { role: 'assistant' }],
        ['contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: nameFor(kind) } } }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } } }],
        ['contentBlockStop', { contentBlockIndex: 0 }],
        ['messageStop', { stopReason: 'tool_use' }],
      ], () => decoder.finish()), dropped);
    },
  },
  'OpenAI Chat, whole answer (a function call; a custom tool sent as a function)': {
    kinds: ['function', 'custom'], name: 'tool_call.arguments',
    read: (kind, input) => {
      const dropped: string[] = [];
      const response = openai.decodeResponse('openai.chat', {
        id: 'c1', model: 'gpt-test', usage: { prompt_tokens: 1, completion_tokens: 1 },
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: nameFor(kind), arguments: input } }] } }],
      }, route(), requestFor(kind), dropped);
      return readOf(response.content, dropped);
    },
  },
  'OpenAI Chat, whole answer (a native custom tool call)': {
    kinds: ['custom'], name: 'tool_call.arguments',
    read: (kind, input) => {
      const dropped: string[] = [];
      const response = openai.decodeResponse('openai.chat', {
        id: 'c1', model: 'gpt-test', usage: { prompt_tokens: 1, completion_tokens: 1 },
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'custom', custom: { name: nameFor(kind), input } }] } }],
      }, route(), requestFor(kind), dropped);
      return readOf(response.content, dropped);
    },
  },
  'OpenAI Chat, streamed': {
    kinds: ['function', 'custom'], name: 'tool_call.arguments',
    read: (kind, input) => {
      const dropped: string[] = [];
      const decoder = openai.streamDecoder('openai.chat', route(), requestFor(kind), dropped);
      const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] });
      return readOf(streamed((e, d) => decoder.decode(e, d), [
        [undefined, chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: nameFor(kind), arguments: input } }] })],
        [undefined, chunk({}, 'tool_calls')],
        [undefined, '[DONE]'],
      ], () => decoder.finish()), dropped);
    },
  },
  'OpenAI Responses, whole answer': {
    kinds: ['function', 'custom'], name: 'tool_call.arguments',
    read: (kind, input) => {
      const dropped: string[] = [];
      const response = openai.decodeResponse('openai.responses', {
        id: 'resp_1', object: 'response', model: 'gpt-test', status: 'completed', usage: { input_tokens: 1, output_tokens: 1 }, output: [responsesItem(kind, input)],
      }, route(), requestFor(kind), dropped);
      return readOf(response.content, dropped);
    },
  },
  'OpenAI Responses, streamed (the item given whole when done)': {
    kinds: ['function', 'custom'], name: 'tool_call.arguments',
    read: (kind, input) => {
      const dropped: string[] = [];
      const decoder = openai.streamDecoder('openai.responses', route(), requestFor(kind), dropped);
      const answer = { id: 'resp_1', object: 'response', model: 'gpt-test', usage: { input_tokens: 1, output_tokens: 1 } };
      const item = responsesItem(kind, input);
      return readOf(streamed((e, d) => decoder.decode(e, d), [
        ['response.created', { type: 'response.created', response: { ...answer, status: 'in_progress', output: [] } }],
        ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, input: undefined, arguments: undefined } }],
        ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
        ['response.completed', { type: 'response.completed', response: { ...answer, status: 'completed', output: [item] } }],
      ], () => decoder.finish()), dropped);
    },
  },
};

/** An Anthropic answer's tool_use, and the same streamed: `input` given at the block's start, or as its one partial_json. */
const claudeAnswer = (kind: Kind, input: unknown) => ({
  id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 },
  content: [{ type: 'tool_use', id: 'toolu_1', name: nameFor(kind), input }],
});
/** The call streamed: `start` as the block's input, then `partials` as its input_json_delta pieces. */
function claudeStreamed(kind: Kind, start: unknown, partials: unknown[]): Read {
  const dropped: string[] = [];
  const decoder = anthropic.streamDecoder('anthropic.messages', route(), requestFor(kind), dropped);
  return readOf(streamed((e, d) => decoder.decode(e, d), [
    ['message_start', { type: 'message_start', message: { ...claudeAnswer(kind, {}), content: [], stop_reason: null } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: nameFor(kind), input: start } }],
    ...partials.map((partial_json): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } }]),
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 1 } }],
    ['message_stop', { type: 'message_stop' }],
  ], () => decoder.finish()), dropped);
}
const geminiAnswer = (kind: Kind, args: unknown) => ({
  candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: nameFor(kind), args } }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 },
});

Object.assign(PATHS, {
  'Anthropic Messages, whole answer': {
    kinds: ['function', 'custom'], name: 'tool_use.input',
    read: (kind: Kind, input: unknown) => {
      const dropped: string[] = [];
      return readOf(anthropic.decodeResponse('anthropic.messages', claudeAnswer(kind, input), route(), requestFor(kind), dropped).content, dropped);
    },
  },
  'Anthropic Messages, streamed (the input given at the block start)': {
    kinds: ['function', 'custom'], name: 'tool_use.input', read: (kind: Kind, input: unknown) => claudeStreamed(kind, input, []), // any piece, even '', replaces the start's input
  },
  'Anthropic Messages, streamed (the input given as partial_json)': {
    kinds: ['function', 'custom'], name: 'tool_use.input', read: (kind: Kind, input: unknown) => claudeStreamed(kind, {}, [input]),
  },
  'Gemini, whole answer': {
    kinds: ['function', 'custom'], name: 'functionCall.args',
    read: (kind: Kind, input: unknown) => {
      const dropped: string[] = [];
      return readOf(decodeGeminiResponse(geminiAnswer(kind, input), route(), requestFor(kind), dropped).content, dropped);
    },
  },
  'Gemini, streamed (a functionCall arrives whole)': {
    kinds: ['function', 'custom'], name: 'functionCall.args',
    read: (kind: Kind, input: unknown) => {
      const dropped: string[] = [];
      const decoder = geminiStreamDecoder(route(), requestFor(kind), dropped);
      return readOf(streamed((e, d) => decoder.decode(e, d), [[undefined, geminiAnswer(kind, input)]], () => decoder.finish()), dropped);
    },
  },
} satisfies typeof PATHS);

function responsesItem(kind: Kind, input: unknown): Record<string, unknown> {
  return kind === 'custom'
    ? { type: 'custom_tool_call', id: 'ctc_1', call_id: 'a', name: nameFor(kind), input }
    : { type: 'function_call', id: 'fc_1', call_id: 'a', name: nameFor(kind), arguments: input };
}

for (const [path, { kinds, name, read }] of Object.entries(PATHS)) {
  for (const kind of kinds) {
    t.test(`${path}, ${kind} tool`, async (t) => {
      const absent = read(kind, undefined);
      t.same(absent.dropped, [], 'an absent input is named nowhere');
      t.equal(absent.tool_kind, kind);
      for (const input of [42, 0, true, false]) {
        const got = read(kind, input);
        t.equal(got.arguments, absent.arguments, `${JSON.stringify(input)}: read as no input (${JSON.stringify(absent.arguments)}), not as its text`);
        t.equal(got.tool_kind, kind);
        t.same(got.dropped, [name], `${JSON.stringify(input)}: named ${name}`);
      }
      const nul = read(kind, null);
      t.equal(nul.arguments, absent.arguments, 'null: no input');
      t.same(nul.dropped, [], 'null: named nowhere');
      const object = read(kind, { q: 'x' });
      t.equal(object.arguments, '{"q":"x"}', 'an object: its JSON');
      t.same(object.dropped, []);
    });
  }
}
