// No silent drops (issue 44 item 3), entry by entry: every rule of every codec's request DROPPED
// table has a case here showing what happens to it: named (the name x-relay-dropped carries),
// refused (a 400 naming it), mapped (the upstream body carries it in another form), or left out
// with no effect on the answer; every rule of a response table, what the client reads instead.
// A table entry without a case fails the last test.
import t from 'tap';
import type { CanonicalRequest, ContentPart, Message } from '../../core/plugin-api/canonical.ts';
import type { Route } from '../../core/plugin-api.ts';
import * as openai from '../../plugins/vendor-openai/codec/index.ts';
import * as anthropic from '../../plugins/vendor-anthropic/codec/index.ts';
import * as bedrock from '../../plugins/vendor-bedrock/codec/index.ts';
import { GEMINI_REQUEST_DROPPED, GEMINI_RESPONSE_DROPPED, decodeGeminiResponse, encodeGeminiRequest, geminiStreamDecoder } from '../../plugins/vendor-google/codec/index.ts';
import {
  CHAT_REQUEST_DROPPED, CHAT_RESPONSE_DROPPED, RESPONSES_REQUEST_DROPPED, RESPONSES_RESPONSE_DROPPED, chatCodec, responsesCodec,
} from '../../plugins/wire-vendor-a/codec/index.ts';
import { MESSAGES_REQUEST_DROPPED, MESSAGES_RESPONSE_DROPPED, messagesCodec } from '../../plugins/wire-vendor-b/codec/index.ts';
import type { CanonicalResponse } from '../../core/plugin-api/canonical.ts';
import { collect, context } from './harness.ts';
import { fakeRoute } from '../support/fake-route.ts';

type Body = Record<string, any>;
type Outcome =
  | { named: string[] }
  | { refused: RegExp }
  | { mapped: (body: Body) => boolean }
  | { noEffect: (body: Body) => boolean };
/** An upstream encoder's case: the canonical request (over BASE) and, optionally, the route's model. */
interface EncoderCase { request: Partial<CanonicalRequest>; model?: string; catalog?: { reasoning?: boolean }; expect: Outcome }
/** An inbound codec's case: the client's JSON. */
interface InboundCase { body: Body; expect: { named: string[] } | { refused: RegExp } | { mapped: (request: CanonicalRequest) => boolean } | { noEffect: true } }

const user = (...content: ContentPart[]): Message => ({ role: 'user', content });
const text = (s: string): { type: 'text'; text: string } => ({ type: 'text', text: s });
const BASE: CanonicalRequest = { model: 'm', messages: [user(text('hi'))] };
const PNG = { type: 'base64' as const, media_type: 'image/png', data: 'iVBORw0KGgo=' };
const png = { type: 'image' as const, source: PNG };
const lookup = { type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} } };
const custom = { type: 'custom' as const, name: 'apply_patch' };
/** A tool round trip: the assistant calls lookup (optionally after some reasoning), the user answers. */
const toolTurn = (result: Partial<Extract<ContentPart, { type: 'tool_result' }>> = {}, before: ContentPart[] = [], id = 'call_1'): Message[] => [
  user(text('look it up')),
  { role: 'assistant', content: [...before, { type: 'tool_call', id, name: 'lookup', arguments: '{}' }] },
  user({ type: 'tool_result', tool_call_id: id, content: [text('not found')], ...result }),
];
const foreignReasoning: ContentPart = { type: 'reasoning', text: 'thought', signature: 'sig', origin: 'somebody-else' };
const system = (...content: ContentPart[]): Message => ({ role: 'system', content });
const assistant = (...content: ContentPart[]): Message => ({ role: 'assistant', content });
const pdf: ContentPart = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, filename: 'a.pdf' };
const refusal: Message[] = [user(text('q')), { role: 'assistant', content: [{ type: 'refusal', text: 'I cannot' }] }, user(text('ok'))];
const webSearch = { type: 'web_search' as const };
/** A search another vendor ran, in the history. */
const searchedBy = (origin: string): Message[] => [
  user(text('news?')),
  { role: 'assistant', content: [{ type: 'web_search_call', id: 'ws_1', query: 'news', status: 'completed', origin, raw: { opaque: true } }, text('Nothing new.')] },
  user(text('ok')),
];
const noWebSearch = { request: { tools: [webSearch], messages: searchedBy('openai') }, expect: { named: ['tools.web_search', 'history.web_search_call'] } };

function route(model: string, catalog?: { reasoning?: boolean }): Route {
  return catalog ? { upstreamModel: model, model: { spec: catalog, metadata: { slug: model } } } as unknown as Route : fakeRoute(model);
}

const ENCODERS: Record<string, { table: Record<string, string>; model: string; encode: (r: CanonicalRequest, route: Route, dropped: string[]) => unknown; cases: Record<string, EncoderCase> }> = {
  CHAT_UPSTREAM_DROPPED: {
    table: openai.CHAT_UPSTREAM_DROPPED, model: 'gpt-test',
    encode: (r, rt, d) => openai.encodeRequest('openai.chat', r, rt, d),
    cases: {
      'reasoning parts (incl. signed or encrypted reasoning)': { request: { messages: toolTurn({}, [foreignReasoning]) }, expect: { named: ['reasoning'] } },
      'reasoning.summary': { request: { reasoning: { effort: 'low', summary: true } }, expect: { named: ['reasoning.summary'] } },
      'reasoning.budget_tokens': { request: { reasoning: { budget_tokens: 20000 } }, expect: { mapped: (b) => typeof b.reasoning_effort === 'string' } },
      'images and documents in assistant and system messages': { request: { messages: [system({ type: 'image', source: PNG }), user(text('hi'))] }, expect: { refused: /an image in a system message/ } },
      'is_error of tool results': { request: { messages: toolTurn({ is_error: true }) }, expect: { mapped: (b) => b.messages[2].content === 'Error: not found' } },
      metadata: { request: { metadata: { a: 'b' } }, expect: { named: ['metadata'] } },
      'custom tools': { request: { tools: [custom] }, expect: { mapped: (b) => b.tools[0].function.name === 'apply_patch' && 'input' in b.tools[0].function.parameters.properties } },
      'web search (the tool and the searches of the history)': noWebSearch,
    },
  },
  RESPONSES_UPSTREAM_DROPPED: {
    table: openai.RESPONSES_UPSTREAM_DROPPED, model: 'gpt-test',
    encode: (r, rt, d) => openai.encodeRequest('openai.responses', r, rt, d),
    cases: {
      stop: { request: { stop: ['END'] }, expect: { refused: /`gpt-test` cannot take `stop`.*no stop sequences/ } },
      'reasoning from another origin (signed or encrypted by another vendor)': { request: { messages: toolTurn({}, [foreignReasoning]) }, expect: { named: ['reasoning'] } },
      'reasoning.budget_tokens': { request: { reasoning: { budget_tokens: 20000 } }, expect: { mapped: (b) => typeof b.reasoning.effort === 'string' } },
      'is_error of tool results': { request: { messages: toolTurn({ is_error: true }) }, expect: { mapped: (b) => b.input.at(-1).output === 'Error: not found' } },
      'max_output_tokens below 16': { request: { max_output_tokens: 5 }, expect: { named: ['max_output_tokens'] } },
      'images in assistant messages': { request: { messages: [user(text('q')), { role: 'assistant', content: [{ type: 'image', source: PNG }] }, user(text('q'))] }, expect: { refused: /an image in an assistant message/ } },
      'documents in assistant messages': { request: { messages: [user(text('q')), assistant(text('here'), pdf), user(text('q'))] }, expect: { refused: /`gpt-test` cannot take a document in an assistant message/ } },
      'refusal parts in history': { request: { messages: refusal }, expect: { mapped: (b) => b.input[1].role === 'assistant' && b.input[1].content === 'I cannot' } },
      'web search': { request: { tools: [{ ...webSearch, max_uses: 3, allowed_domains: ['example.com'] }], tool_choice: { type: 'tool', name: 'web_search' } }, expect: { named: ['tools.web_search.max_uses', 'tool_choice'] } },
      'web searches of the history made by another vendor': { request: { messages: searchedBy('anthropic') }, expect: { named: ['history.web_search_call'] } },
    },
  },
  MESSAGES_UPSTREAM_DROPPED: {
    table: anthropic.MESSAGES_UPSTREAM_DROPPED, model: 'claude-test',
    encode: (r, rt, d) => anthropic.encodeRequest('anthropic.messages', r, rt, d),
    cases: {
      'reasoning from another origin, and thinking without a signature': { request: { messages: toolTurn({}, [foreignReasoning]) }, expect: { named: ['reasoning'] } },
      'reasoning.summary': { request: { reasoning: { effort: 'low', summary: true } }, expect: { mapped: (b) => b.thinking?.type === 'enabled' } },
      'temperature and top_p while thinking is on': { request: { reasoning: { effort: 'low' }, temperature: 0.2, top_p: 0.5 }, expect: { named: ['temperature', 'top_p'] } },
      'top_p when temperature is set': { request: { temperature: 0.2, top_p: 0.5 }, expect: { named: ['top_p'] } },
      'temperature above 1': { request: { temperature: 1.5 }, expect: { named: ['temperature'] } },
      'thinking when tool_choice forces a tool': { request: { reasoning: { effort: 'low' }, tools: [lookup], tool_choice: 'required' }, expect: { named: ['reasoning'] } },
      'thinking when the assistant turn whose tool calls are answered has no signed thinking': { request: { reasoning: { effort: 'low' }, tools: [lookup], messages: toolTurn() }, expect: { named: ['reasoning'] } },
      'reasoning, for a model the catalog marks reasoning: false': { request: { reasoning: { effort: 'high' } }, catalog: { reasoning: false }, expect: { named: ['reasoning'] } },
      'stop sequences of whitespace only': { request: { stop: ['END', '  '] }, expect: { named: ['stop'] } },
      'response_format json_schema name, description and strict': { request: { response_format: { type: 'json_schema', name: 'n', description: 'd', strict: true, schema: { type: 'object' } } }, expect: { noEffect: (b) => b.output_config.format.schema.type === 'object' } },
      'image detail': { request: { messages: [user({ type: 'image', source: PNG, detail: 'low' })] }, expect: { named: ['image.detail'] } },
      'images and documents in system messages': { request: { messages: [system({ type: 'document', source: { type: 'text', text: 'doc' } }), user(text('hi'))] }, expect: { refused: /a document in a system message/ } },
      'images and documents in assistant messages': { request: { messages: [user(text('q')), assistant(text('here'), pdf), user(text('q'))] }, expect: { refused: /`claude-test` cannot take a document in an assistant message/ } },
      'refusal parts in history': { request: { messages: refusal }, expect: { mapped: (b) => b.messages[1].content[0].text === 'I cannot' } },
      metadata: { request: { metadata: { a: 'b' } }, expect: { named: ['metadata'] } },
      'position of system messages inside the conversation': { request: { messages: [user(text('hi')), system(text('be brief'))] }, expect: { mapped: (b) => b.system[0].text === 'be brief' } },
      'tool call ids outside [a-zA-Z0-9_-]': { request: { tools: [lookup], messages: toolTurn({}, [], 'call.1') }, expect: { mapped: (b) => b.messages[1].content[0].id === 'call_1' && b.messages[2].content[0].tool_use_id === 'call_1' } },
      'custom tools': { request: { tools: [custom] }, expect: { mapped: (b) => b.tools[0].name === 'apply_patch' && 'input' in b.tools[0].input_schema.properties } },
      'web search': { request: { tools: [{ ...webSearch, max_uses: 2, search_context_size: 'high' }] }, expect: { named: ['tools.web_search.search_context_size'] } },
      'web searches of the history made by another vendor': { request: { messages: searchedBy('openai') }, expect: { named: ['history.web_search_call'] } },
      'a search left without its result, followed by more conversation': {
        request: { messages: [user(text('news?')), { role: 'assistant', content: [{ type: 'web_search_call', id: 'srvtoolu_1', status: 'in_progress', origin: 'anthropic', raw: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } }] }] }, user(text('never mind'))] },
        expect: { named: ['history.web_search_call'] },
      },
    },
  },
  CONVERSE_REQUEST_DROPPED: {
    table: bedrock.CONVERSE_REQUEST_DROPPED, model: 'anthropic.claude-sonnet-4-5',
    encode: (r, rt, d) => bedrock.encodeRequest('bedrock.converse', r, rt, d),
    cases: {
      'reasoning from another origin, and reasoning text without a signature': { request: { messages: toolTurn({}, [foreignReasoning]) }, expect: { named: ['reasoning'] } },
      'reasoning for a model other than Claude': { request: { reasoning: { effort: 'low' } }, model: 'meta.llama3-70b-instruct-v1:0', expect: { named: ['reasoning'] } },
      'reasoning.summary': { request: { reasoning: { effort: 'low', summary: true } }, expect: { mapped: (b) => b.additionalModelRequestFields.thinking.type === 'enabled' } },
      'temperature and top_p while thinking is on': { request: { reasoning: { effort: 'low' }, temperature: 0.2, top_p: 0.5 }, expect: { named: ['temperature', 'top_p'] } },
      'top_p when temperature is set': { request: { temperature: 0.2, top_p: 0.5 }, expect: { named: ['top_p'] } },
      'temperature above 1': { request: { temperature: 1.5 }, expect: { named: ['temperature'] } },
      'thinking when tool_choice forces a tool': { request: { reasoning: { effort: 'low' }, tools: [lookup], tool_choice: 'required' }, expect: { named: ['reasoning'] } },
      'thinking when the assistant turn whose tool calls are answered has no signed thinking': { request: { reasoning: { effort: 'low' }, tools: [lookup], messages: toolTurn() }, expect: { named: ['reasoning'] } },
      'tool_choice none': { request: { tools: [lookup], tool_choice: 'none', messages: toolTurn() }, expect: { named: ['tool_choice'] } },
      parallel_tool_calls: { request: { tools: [lookup], parallel_tool_calls: false }, expect: { named: ['parallel_tool_calls'] } },
      'stop sequences of whitespace only': { request: { stop: ['END', ' '] }, expect: { named: ['stop'] } },
      'response_format json_schema strict': { request: { response_format: { type: 'json_schema', name: 'n', strict: true, schema: { type: 'object' } } }, expect: { noEffect: (b) => b.outputConfig.textFormat.structure.jsonSchema.name === 'n' } },
      'image detail': { request: { messages: [user({ type: 'image', source: PNG, detail: 'high' })] }, expect: { named: ['image.detail'] } },
      'image URLs other than data: and s3://': { request: { messages: [user({ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } })] }, expect: { refused: /an image URL/ } },
      'images and documents in system messages': { request: { messages: [system({ type: 'image', source: PNG }), user(text('hi'))] }, expect: { refused: /an image in a system message/ } },
      'images and documents in assistant messages': { request: { messages: [user(text('q')), assistant(png), user(text('q'))] }, expect: { refused: /an image in an assistant message/ } },
      'user and metadata': { request: { user: 'u1', metadata: { a: 'b' } }, expect: { mapped: (b) => b.requestMetadata.user === 'u1' && b.requestMetadata.a === 'b' } },
      'refusal parts in history': { request: { messages: refusal }, expect: { mapped: (b) => b.messages[1].content[0].text === 'I cannot' } },
      'position of system messages inside the conversation': { request: { messages: [user(text('hi')), system(text('be brief'))] }, expect: { mapped: (b) => b.system[0].text === 'be brief' } },
      'tool call ids outside [a-zA-Z0-9_-]': { request: { tools: [lookup], messages: toolTurn({}, [], 'call.1') }, expect: { mapped: (b) => b.messages[1].content[0].toolUse.toolUseId === 'call_1' } },
      'custom tools': { request: { tools: [custom] }, expect: { mapped: (b) => b.toolConfig.tools[0].toolSpec.name === 'apply_patch' } },
      'web search (the tool and the searches of the history)': noWebSearch,
    },
  },
  GEMINI_REQUEST_DROPPED: {
    table: GEMINI_REQUEST_DROPPED, model: 'gemini-test',
    encode: (r, _rt, d) => encodeGeminiRequest(r, 'json-schema', d),
    cases: {
      'tool call ids': { request: { tools: [lookup], messages: toolTurn() }, expect: { mapped: (b) => b.contents[2].parts[0].functionResponse.name === 'lookup' } },
      'reasoning text': { request: { messages: [user(text('q')), { role: 'assistant', content: [{ type: 'reasoning', text: 'mine', origin: 'gemini' }, text('a')] }, user(text('q'))] }, expect: { noEffect: (b) => b.contents[1].parts.length === 1 } },
      'reasoning from another origin': { request: { messages: toolTurn({}, [foreignReasoning]) }, expect: { named: ['reasoning'] } },
      parallel_tool_calls: { request: { tools: [lookup], parallel_tool_calls: false }, expect: { named: ['parallel_tool_calls'] } },
      'response_format json_schema name, description and strict': { request: { response_format: { type: 'json_schema', name: 'n', strict: true, schema: { type: 'object' } } }, expect: { noEffect: (b) => b.generationConfig.responseJsonSchema.type === 'object' } },
      'image detail': { request: { messages: [user({ type: 'image', source: PNG, detail: 'low' })] }, expect: { named: ['image.detail'] } },
      'images in tool results': { request: { tools: [lookup], messages: toolTurn({ content: [text('here'), png] }) }, expect: { mapped: (b) => b.contents[2].parts[2].inlineData.data === PNG.data } },
      'images and documents in system messages': { request: { messages: [system({ type: 'image', source: PNG }), user(text('hi'))] }, expect: { refused: /an image in a system message/ } },
      'images and documents in assistant messages': {
        request: { messages: [user(text('q')), assistant(png, pdf), user(text('q'))] },
        expect: { mapped: (b) => b.contents[1].role === 'model' && b.contents[1].parts[0].inlineData.mimeType === 'image/png' && b.contents[1].parts[1].inlineData.mimeType === 'application/pdf' },
      },
      metadata: { request: { metadata: { a: 'b' } }, expect: { named: ['metadata'] } },
      user: { request: { user: 'u1' }, expect: { named: ['user'] } },
      'refusal parts in history': { request: { messages: refusal }, expect: { mapped: (b) => b.contents[1].parts[0].text === 'I cannot' } },
      'position of system messages inside the conversation': { request: { messages: [user(text('hi')), system(text('be brief'))] }, expect: { mapped: (b) => b.systemInstruction.parts[0].text === 'be brief' } },
      'stop sequences beyond the fifth': { request: { stop: ['a', 'b', 'c', 'd', 'e', 'f'] }, expect: { refused: /at most 5 stop sequences/ } },
      'tool strict flag': { request: { tools: [{ ...lookup, strict: true }] }, expect: { named: ['tools.strict'] } },
      'reasoning effort with a budget': { request: { reasoning: { effort: 'low', budget_tokens: 3000 } }, expect: { mapped: (b) => b.generationConfig.thinkingConfig.thinkingBudget === 3000 } },
      'custom tools': { request: { tools: [custom] }, expect: { mapped: (b) => b.tools[0].functionDeclarations[0].name === 'apply_patch' } },
      'web search (the tool and the searches of the history)': noWebSearch,
    },
  },
};

const CHAT = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const RESPONSES = { model: 'm', input: 'hi' };
const MESSAGES = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

const INBOUND: Record<string, { table: Record<string, string>; codec: typeof chatCodec; cases: Record<string, InboundCase> }> = {
  CHAT_REQUEST_DROPPED: {
    table: CHAT_REQUEST_DROPPED, codec: chatCodec,
    cases: {
      'n of 1': { body: { ...CHAT, n: 1 }, expect: { named: ['n'] } },
      'frequency_penalty, presence_penalty, logit_bias, seed, logprobs, top_logprobs': {
        body: { ...CHAT, frequency_penalty: 1, presence_penalty: 1, logit_bias: { 1: 1 }, seed: 1, logprobs: true, top_logprobs: 2 },
        expect: { named: ['frequency_penalty', 'presence_penalty', 'logit_bias', 'seed', 'logprobs', 'top_logprobs'] },
      },
      web_search_options: {
        body: { ...CHAT, web_search_options: { search_context_size: 'low', user_location: { type: 'approximate', approximate: { country: 'DE' } } } },
        expect: { mapped: (r) => r.tools?.[0]?.type === 'web_search' && r.tools[0].search_context_size === 'low' && r.tools[0].user_location?.country === 'DE' },
      },
      'audio, modalities, prediction, service_tier, store, verbosity': {
        body: { ...CHAT, audio: { voice: 'x', format: 'mp3' }, modalities: ['text'], prediction: { type: 'content', content: 'x' }, service_tier: 'auto', store: true, verbosity: 'low' },
        expect: { named: ['audio', 'modalities', 'prediction', 'service_tier', 'store', 'verbosity'] },
      },
      'prompt_cache_key, prompt_cache_options, prompt_cache_retention': {
        body: { ...CHAT, prompt_cache_key: 'k', prompt_cache_options: { mode: 'explicit' }, prompt_cache_retention: '24h' },
        expect: { named: ['prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention'] },
      },
      moderation: { body: { ...CHAT, moderation: { model: 'omni-moderation-latest' } }, expect: { refused: /cannot take `moderation` here: moderation runs inside OpenAI/ } },
      'any other top-level member': {
        // Parsed as a client's body is: "__proto__" an own member, as JSON.parse makes it.
        body: JSON.parse(`{"model":"m","messages":[{"role":"user","content":"hi"}],"bogus_param":1,"a b":2,"__proto__":3,"${'x'.repeat(65)}":4}`),
        expect: { named: ['bogus_param', 'other members'] },
      },
      'deprecated function calling (functions, function_call, role "function" messages)': { body: { ...CHAT, functions: [{ name: 'f', parameters: {} }] }, expect: { refused: /deprecated function calling/ } },
      'allowed_tools subsets of tool_choice': {
        body: { ...CHAT, tools: [{ type: 'function', function: { name: 'a' } }], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'a' } }] } } },
        expect: { named: ['tool_choice.tools'] },
      },
      'image_url parts in tool messages': {
        body: { ...CHAT, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] },
        expect: { mapped: (r) => r.messages.some((m) => m.content.some((p) => p.type === 'tool_result' && p.content[0]?.type === 'image')) },
      },
    },
  },
  RESPONSES_REQUEST_DROPPED: {
    table: RESPONSES_REQUEST_DROPPED, codec: responsesCodec,
    cases: {
      'server-side tools (tool_search, file_search, code_interpreter, computer_use, image_generation, local_shell, shell, mcp, ...)': {
        body: { ...RESPONSES, tools: [{ type: 'tool_search' }, { type: 'file_search', vector_store_ids: ['vs'] }] }, expect: { named: ['tools.tool_search', 'tools.file_search'] },
      },
      'web_search and web_search_preview tools': {
        body: { ...RESPONSES, tools: [{ type: 'web_search', external_web_access: false, filters: { allowed_domains: ['example.com'] } }] }, expect: { named: ['tools.web_search.external_web_access'] },
      },
      'web_search_call items of the history': {
        body: { ...RESPONSES, input: [{ role: 'user', content: 'news?' }, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } }, { role: 'user', content: 'hi' }] },
        expect: { mapped: (r) => r.messages[1].content[0].type === 'web_search_call' && (r.messages[1].content[0] as { origin?: string }).origin === 'openai' },
      },
      'tool_choice naming a server-side tool, allowed_tools subsets': {
        body: { ...RESPONSES, tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }, expect: { named: ['tool_choice'] },
      },
      'input items of other types (*_call of server tools, compaction, ...)': {
        body: { ...RESPONSES, input: [{ type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'] }, { role: 'user', content: 'hi' }] },
        expect: { named: ['input.file_search_call'] },
      },
      'include, prompt_cache_key, background, truncation, service_tier': {
        body: { ...RESPONSES, include: ['reasoning.encrypted_content'], prompt_cache_key: 'k', background: false, truncation: 'auto', service_tier: 'auto' },
        expect: { named: ['include', 'service_tier', 'truncation', 'background', 'prompt_cache_key'] },
      },
      'text.verbosity, top_logprobs, max_tool_calls, client_metadata': {
        body: { ...RESPONSES, text: { verbosity: 'low' }, top_logprobs: 2, max_tool_calls: 3, client_metadata: { a: 'b' } },
        expect: { named: ['text.verbosity', 'top_logprobs', 'max_tool_calls', 'client_metadata'] },
      },
      'prompt_cache_options, prompt_cache_retention, context_management, stream_options': {
        body: { ...RESPONSES, prompt_cache_options: { mode: 'explicit' }, prompt_cache_retention: '24h', context_management: [{ type: 'compaction', compact_threshold: 1000 }], stream_options: { include_obfuscation: false } },
        expect: { named: ['prompt_cache_options', 'prompt_cache_retention', 'context_management', 'stream_options'] },
      },
      moderation: { body: { ...RESPONSES, moderation: { model: 'omni-moderation-latest' } }, expect: { refused: /cannot take `moderation` here/ } },
      'any other top-level member': { body: { ...RESPONSES, bogus_param: 1 }, expect: { named: ['bogus_param'] } },
      'namespace descriptions': {
        body: { ...RESPONSES, tools: [{ type: 'namespace', name: 'ns', description: 'Files.', tools: [{ type: 'function', name: 'read', description: 'Reads.', parameters: { type: 'object' } }] }] },
        expect: { mapped: (r) => /Files\./.test((r.tools?.[0] as { description?: string }).description ?? '') },
      },
    },
  },
  MESSAGES_REQUEST_DROPPED: {
    table: MESSAGES_REQUEST_DROPPED, codec: messagesCodec,
    cases: {
      cache_control: { body: { ...MESSAGES, system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }] }, expect: { noEffect: true } },
      top_k: { body: { ...MESSAGES, top_k: 5 }, expect: { named: ['top_k'] } },
      'context_management, container, mcp_servers, service_tier, speed': {
        body: { ...MESSAGES, context_management: { edits: [] }, container: 'c', mcp_servers: [], service_tier: 'auto', speed: 'fast' },
        expect: { named: ['service_tier', 'speed', 'context_management', 'container', 'mcp_servers'] },
      },
      'server tools (typed tools such as bash_*, text_editor_*, computer_*, code_execution_*)': {
        body: { ...MESSAGES, tools: [{ type: 'code_execution_20250522', name: 'code_execution' }, { type: 'bash_20250124', name: 'bash' }] },
        expect: { named: ['tools.code_execution_20250522', 'tools.bash_20250124'] },
      },
      'web search tools (web_search_YYYYMMDD)': {
        body: { ...MESSAGES, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3, blocked_domains: ['example.com'] }] },
        expect: { mapped: (r) => r.tools?.[0]?.type === 'web_search' && r.tools[0].max_uses === 3 && r.tools[0].blocked_domains?.[0] === 'example.com' },
      },
      'server_tool_use and *_tool_result blocks of server tools in history': {
        body: { ...MESSAGES, messages: [{ role: 'user', content: 'run it' }, { role: 'assistant', content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'print(1)' } },
          { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'code_execution_result', stdout: '1', stderr: '', return_code: 0, content: [] } },
          { type: 'text', text: 'It printed 1.' },
        ] }, { role: 'user', content: 'ok' }] },
        expect: { named: ['messages.server_tool_use', 'messages.code_execution_tool_result'] },
      },
      'citations, and a document\'s context': {
        body: { ...MESSAGES, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' }, citations: { enabled: true }, context: 'from the wiki' }, { type: 'text', text: 'sum up' }] }] },
        expect: { named: ['citations', 'document.context'] },
      },
      'metadata.user_id': { body: { ...MESSAGES, metadata: { user_id: 'u1' } }, expect: { mapped: (r) => r.user === 'u1' } },
      'any other top-level member': { body: { ...MESSAGES, bogus_param: 1, 'bad name!': 2 }, expect: { named: ['bogus_param', 'other members'] } },
    },
  },
};

for (const [name, encoder] of Object.entries(ENCODERS)) {
  t.test(`${name}: each rule is named, refused, mapped or without effect`, async (t) => {
    for (const [entry, c] of Object.entries(encoder.cases)) {
      const request = { ...BASE, ...c.request, model: c.model ?? encoder.model };
      const dropped: string[] = [];
      const encode = () => encoder.encode(request, route(c.model ?? encoder.model, c.catalog), dropped) as Body;
      if ('refused' in c.expect) {
        t.throws(encode, { status: 400, message: c.expect.refused }, `${entry}: refused, naming it`);
        continue;
      }
      const body = encode();
      if ('named' in c.expect) t.same([...new Set(dropped)].sort(), [...c.expect.named].sort(), `${entry}: named ${c.expect.named.join(', ')}`);
      else {
        t.ok('mapped' in c.expect ? c.expect.mapped(body) : c.expect.noEffect(body), `${entry}: ${'mapped' in c.expect ? 'mapped' : 'no effect on the answer'}`);
        t.same(dropped, [], `${entry}: nothing named`);
      }
    }
  });
}

for (const [name, inbound] of Object.entries(INBOUND)) {
  t.test(`${name}: each rule is named, refused, mapped or without effect`, async (t) => {
    for (const [entry, c] of Object.entries(inbound.cases)) {
      if ('refused' in c.expect) {
        t.throws(() => inbound.codec.decodeRequest(c.body), { status: 400, message: c.expect.refused }, `${entry}: refused, naming it`);
        continue;
      }
      const request = inbound.codec.decodeRequest(c.body);
      const named = inbound.codec.droppedParameters?.(c.body) ?? [];
      if ('named' in c.expect) t.same([...named].sort(), [...c.expect.named].sort(), `${entry}: named ${c.expect.named.join(', ')}`);
      else {
        if ('mapped' in c.expect) t.ok(c.expect.mapped(request), `${entry}: mapped`);
        t.same(named, [], `${entry}: nothing named`);
      }
    }
  });
}

// What a client's shape cannot render of an answer (the response tables): each case shows what the
// client reads instead, and what the encoder names for x-relay-dropped.
const ANSWER: CanonicalResponse = {
  id: 'msg_1', model: 'm', stop_reason: 'end_turn',
  content: [text('the answer')], usage: { input_tokens: 5, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
};
const answer = (over: Partial<CanonicalResponse>): CanonicalResponse => ({ ...ANSWER, ...over });
const SEARCH: ContentPart = { type: 'web_search_call', id: 'ws_1', query: 'relay', status: 'completed', sources: [{ url: 'https://example.com/r', title: 'R' }], origin: 'openai', raw: { id: 'ws_1', type: 'web_search_call' } };
const oddOutput: ContentPart[] = [text('see'), png, { type: 'tool_result', tool_call_id: 'c', content: [text('r')] }];

/** A case reads what the client gets instead; `named`, what the encoder names for x-relay-dropped (nothing when absent). */
const RESPONSES_RENDERED: Record<string, { table: Record<string, string>; codec: typeof chatCodec; cases: Record<string, { response: CanonicalResponse; reads: (body: Body) => boolean; named?: string[] }> }> = {
  CHAT_RESPONSE_DROPPED: {
    table: CHAT_RESPONSE_DROPPED, codec: chatCodec,
    cases: {
      'reasoning parts': {
        response: answer({ content: [{ type: 'reasoning', text: 'hmm' }, text('the answer')], usage: { ...ANSWER.usage, reasoning_tokens: 3 } }),
        reads: (b) => b.choices[0].message.content === 'the answer' && b.usage.completion_tokens_details.reasoning_tokens === 3,
      },
      'image, document and tool_result parts in output': { response: answer({ content: oddOutput }), reads: (b) => b.choices[0].message.content === 'see', named: ['image', 'tool_result'] },
      'stop_sequence (which one matched)': { response: answer({ stop_reason: 'stop_sequence', stop_sequence: 'END' }), reads: (b) => b.choices[0].finish_reason === 'stop' },
      'cache_write_tokens': { response: answer({ usage: { ...ANSWER.usage, cache_write_tokens: 4 } }), reads: (b) => b.usage.prompt_tokens === 5 && !JSON.stringify(b.usage).includes('cache_write') },
      'web_search_call parts': {
        response: answer({ content: [SEARCH, text('one'), { type: 'text', text: 'Relay ships.', citations: [{ type: 'url_citation', url: 'https://example.com/r', title: 'R' }] }] }),
        reads: (b) => b.choices[0].message.content === 'one\n\nRelay ships.'
          && JSON.stringify(b.choices[0].message.annotations) === JSON.stringify([{ type: 'url_citation', url_citation: { url: 'https://example.com/r', title: 'R', start_index: 5, end_index: 17 } }]),
      },
      'pause_turn (a paused server-tool loop)': { response: answer({ content: [{ ...SEARCH, status: 'in_progress' }], stop_reason: 'pause_turn' }), reads: (b) => b.choices[0].finish_reason === 'stop' },
    },
  },
  RESPONSES_RESPONSE_DROPPED: {
    table: RESPONSES_RESPONSE_DROPPED, codec: responsesCodec,
    cases: {
      'image, document and tool_result parts in output': { response: answer({ content: oddOutput }), reads: (b) => b.output.length === 1 && b.output[0].content[0].text === 'see', named: ['image', 'tool_result'] },
      stop_sequence: { response: answer({ stop_reason: 'stop_sequence', stop_sequence: 'END' }), reads: (b) => b.status === 'completed' && !JSON.stringify(b).includes('END') },
    },
  },
  MESSAGES_RESPONSE_DROPPED: {
    table: MESSAGES_RESPONSE_DROPPED, codec: messagesCodec,
    cases: {
      'refusal parts': { response: answer({ content: [{ type: 'refusal', text: 'I cannot' }], stop_reason: 'refusal' }), reads: (b) => b.content[0].type === 'text' && b.content[0].text === 'I cannot' && b.stop_reason === 'refusal' },
      'image, document and tool_result parts in output': { response: answer({ content: oddOutput }), reads: (b) => b.content.length === 1 && b.content[0].text === 'see', named: ['image', 'tool_result'] },
      'custom tool calls': {
        response: answer({ content: [{ type: 'tool_call', id: 'toolu_1', name: 'apply_patch', arguments: '*** Begin Patch', tool_kind: 'custom' }], stop_reason: 'tool_use' }),
        reads: (b) => b.content[0].type === 'tool_use' && b.content[0].input.input === '*** Begin Patch',
      },
      'encrypted_content of another vendor\'s search results': {
        response: answer({ content: [SEARCH] }),
        reads: (b) => b.content[0].type === 'server_tool_use' && b.content[1].content[0].url === 'https://example.com/r' && b.content[1].content[0].encrypted_content === '',
      },
    },
  },
};

for (const [name, rendered] of Object.entries(RESPONSES_RENDERED)) {
  t.test(`${name}: what the client reads instead`, async (t) => {
    for (const [entry, c] of Object.entries(rendered.cases)) {
      const ctx = { ...context(BASE), dropped: [] as string[] };
      const body = rendered.codec.encodeResponse(c.response, ctx) as Body;
      t.ok(c.reads(body), `${entry}: ${JSON.stringify(body).slice(0, 160)}`);
      t.same([...new Set(ctx.dropped)].sort(), c.named ?? [], `${entry}: named ${(c.named ?? ['nothing']).join(', ')}`);
    }
  });
}

// What an upstream's answer holds that canonical cannot carry (the answer decoders' tables): named
// by the decoder, or mapped to canonical parts. A case is the upstream's parts, answered whole or streamed.
/** `keeps`: what of a named part canonical still carries. */
type DecoderCase = { parts: unknown[]; stream?: boolean; expect: { named: string[]; keeps?: (content: ContentPart[]) => boolean } | { mapped: (content: ContentPart[]) => boolean } };
const geminiAnswer = (parts: unknown[]) => ({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 5 } });
const converseAnswer = (content: unknown[]) => ({ output: { message: { role: 'assistant', content } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 5 } });
/** ConverseStream events (name, payload) around `middle`: the message's start, its stop and usage. */
const converseEvents = (middle: Array<[string, unknown]>): Array<[string, unknown]> => [
  ['messageStart', { role: 'assistant' }], ...middle, ['messageStop', { stopReason: 'end_turn' }], ['metadata', { usage: { inputTokens: 3, outputTokens: 5 } }],
];
/** An Anthropic answer's content blocks, and the SSE frames of the same answer streamed. */
const anthropicAnswer = (content: unknown[]) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 5 } });
const anthropicFrames = (content: Array<Record<string, unknown>>): Array<[string, unknown]> => [
  ['message_start', { type: 'message_start', message: { ...anthropicAnswer([]), usage: { input_tokens: 3, output_tokens: 0 } } }],
  ...content.flatMap((block, index): Array<[string, unknown]> => [
    ['content_block_start', { type: 'content_block_start', index, content_block: block.type === 'text' ? { type: 'text', text: '' } : block }],
    ...(block.type === 'text' ? [['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }] as [string, unknown]] : []),
    ...((block.citations as unknown[] | undefined) ?? []).map((citation): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } }]),
    ...((block.partial_json as unknown[] | undefined) ?? []).map((partial_json): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }]),
    ['content_block_stop', { type: 'content_block_stop', index }],
  ]),
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }],
  ['message_stop', { type: 'message_stop' }],
];
/** Blocks of server tools other than web search, an unpaired search result, and a kind Relay does not know. */
const otherServerBlocks = [
  { type: 'text', text: 'Fetched.' },
  { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_fetch', input: { url: 'https://example.com' } },
  { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'web_fetch_result', url: 'https://example.com' } },
  { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_3', content: { type: 'code_execution_result', stdout: '42' } },
  { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 's', input: {} },
  { type: 'hologram' },
];
const otherServerNames = ['server_tool_use', 'web_fetch_tool_result', 'code_execution_tool_result', 'mcp_tool_use', 'hologram'];
const keepsText = (c: ContentPart[]) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Fetched.';
/** Tool calls whose input is text, an array and a number: the first two kept as they are, the last read as none. */
const oddToolUses = [
  { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: '{"q":"x"}' },
  { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: ['a'] },
  { type: 'tool_use', id: 'toolu_3', name: 'lookup', input: 7 },
];
const keepsOddToolUses = (none: string) => (c: ContentPart[]) => c.length === 3 && c.every((p) => p.type === 'tool_call')
  && c.map((p) => (p.type === 'tool_call' ? p.arguments : '')).join(' ') === `{"q":"x"} ["a"] ${none}`;
const citedBlue = [{ type: 'text', text: 'Blue.', citations: [{ type: 'char_location', cited_text: 'blue', document_index: 0, start_char_index: 0, end_char_index: 4 }] }];
const keepsBlue = (c: ContentPart[]) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Blue.';

/** An OpenAI Responses answer's output items, and the stream events of the same answer. */
type OutputItem = { type: string; content?: Array<{ type: string; text?: string; annotations?: unknown[] }> } & Record<string, unknown>;
const responsesAnswer = (output: unknown[]) => ({ id: 'resp_1', object: 'response', model: 'gpt-test', status: 'completed', output, usage: { input_tokens: 3, output_tokens: 5 } });
const responsesEvents = (output: OutputItem[]): unknown[] => [
  { type: 'response.created', response: { ...responsesAnswer([]), status: 'in_progress' } },
  ...output.flatMap((item, i) => [
    { type: 'response.output_item.added', output_index: i, item: item.type === 'message' ? { ...item, content: [] } : item },
    ...(item.content ?? []).flatMap((c, j) => [
      { type: 'response.content_part.added', output_index: i, content_index: j, part: { type: c.type } },
      ...(typeof c.text === 'string' ? [{ type: 'response.output_text.delta', output_index: i, content_index: j, delta: c.text }] : []),
      ...(c.annotations ?? []).map((annotation, k) => ({ type: 'response.output_text.annotation.added', output_index: i, content_index: j, annotation_index: k, annotation })),
      { type: 'response.content_part.done', output_index: i, content_index: j, part: c },
    ]),
    { type: 'response.output_item.done', output_index: i, item },
  ]),
  { type: 'response.completed', response: responsesAnswer(output) },
];
const message = (...content: NonNullable<OutputItem['content']>): OutputItem => ({ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content });
const otherItems: OutputItem[] = [
  message({ type: 'output_text', text: 'Done.', annotations: [] }),
  { type: 'code_interpreter_call', id: 'ci_1', code: 'print(1)', status: 'completed' },
  { type: 'image_generation_call', id: 'ig_1', result: 'AAAA', status: 'completed' },
  { type: 'mcp_call', id: 'mcp_1', name: 'lookup', server_label: 's', arguments: '{}' },
  { type: 'hologram', id: 'h_1' },
];
const otherItemNames = ['code_interpreter_call', 'image_generation_call', 'mcp_call', 'hologram'];
const keepsDone = (c: ContentPart[]) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Done.';
const fileCited = [message({ type: 'output_text', text: 'See a.', annotations: [{ type: 'file_citation', file_id: 'file_1', filename: 'a.pdf', index: 4 }, { type: 'url_citation', url: 'https://a.example', title: 'A', start_index: 4, end_index: 5 }] })];
const keepsUrlCitation = (c: ContentPart[]) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'See a.' && c[0].citations?.length === 1 && c[0].citations[0]?.url === 'https://a.example';
const objectArguments: OutputItem[] = [
  { type: 'custom_tool_call', id: 'ctc_1', call_id: 'a', name: 'apply_patch', input: { patch: 'x' } },
  { type: 'function_call', id: 'fc_1', call_id: 'b', name: 'lookup', arguments: 7 },
];
const keepsObjectArguments = (c: ContentPart[]) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"patch":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '';

/** A chat.completion whose message is `message`. */
const chatAnswer = (message: Record<string, unknown>) => ({ id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 5 } });

const DECODERS: Record<string, { table: Record<string, string>; decode: (c: DecoderCase, dropped: string[]) => ContentPart[]; cases: Record<string, DecoderCase> }> = {
  OPENAI_CHAT_RESPONSE_DROPPED: {
    table: openai.OPENAI_CHAT_RESPONSE_DROPPED,
    decode: (c, dropped) => {
      if (!c.stream) return openai.decodeResponse('openai.chat', chatAnswer(c.parts[0] as Record<string, unknown>), route('openai-test'), BASE, dropped).content;
      // Streamed: one chunk per delta of `parts`, then the finish.
      const decoder = openai.streamDecoder('openai.chat', route('openai-test'), BASE, dropped);
      const chunks = [...c.parts.map((delta) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: null }] })),
        { id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }];
      return collect([...chunks.flatMap((chunk) => decoder.decode(undefined, JSON.stringify(chunk))), ...decoder.decode(undefined, '[DONE]')]).content;
    },
    cases: {
      'annotations of the message (a search model\'s url_citation)': {
        parts: [{ content: 'See a.', annotations: [{ type: 'url_citation', url_citation: { url: 'https://a.example', title: 'A', start_index: 4, end_index: 5 } }, { type: 'file_citation', file_citation: { file_id: 'f' } }] }],
        expect: { named: ['file_citation'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].citations?.[0]?.url === 'https://a.example' && c[0].citations[0].cited_text === 'a' },
      },
      'audio in the message': { parts: [{ content: 'Hi.', audio: { id: 'audio_1', data: 'AAAA', transcript: 'Hi.' } }], expect: { named: ['audio'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Hi.' } },
      'annotations in streamed answers': {
        parts: [{ role: 'assistant', content: 'See a.' }, { annotations: [{ type: 'url_citation', url_citation: { url: 'https://a.example', title: 'A', start_index: 4, end_index: 5 } }, { type: 'file_citation', file_citation: { file_id: 'f' } }] }],
        stream: true, expect: { named: ['file_citation'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'See a.' && c[0].citations?.[0]?.url === 'https://a.example' },
      },
      'audio in streamed answers': {
        parts: [{ role: 'assistant', content: 'Hi.' }, { audio: { id: 'audio_1', transcript: 'Hi.' } }], stream: true, expect: { named: ['audio'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Hi.' },
      },
      'content given as an array of parts (Mistral\'s Magistral models)': {
        parts: [{ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hmm.' }] }, { type: 'text', text: 'Hi.' }, { type: 'image_url', image_url: 'https://a.example/i.png' }] }],
        expect: { named: ['image_url'], keeps: (c) => c.length === 2 && c[0]?.type === 'reasoning' && c[0].text === 'Hmm.' && c[1]?.type === 'text' && c[1].text === 'Hi.' },
      },
      'content parts in streamed answers': {
        parts: [{ role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hmm.' }] }] }, { content: [{ type: 'text', text: 'Hi.' }] }, { content: [{ type: 'reference', reference_ids: [1] }] }],
        stream: true, expect: { named: ['reference'], keeps: (c) => c.length === 2 && c[0]?.type === 'reasoning' && c[0].text === 'Hmm.' && c[1]?.type === 'text' && c[1].text === 'Hi.' },
      },
      'tool-call arguments that are not a string': {
        parts: [{ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: { q: 'x' } } }, { id: 'c2', type: 'function', function: { name: 'lookup', arguments: 42 } }] }],
        expect: { named: ['tool_call.arguments'], keeps: (c) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"q":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '' },
      },
      'tool-call arguments in streamed answers that are not a string': {
        parts: [{ role: 'assistant', tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'lookup', arguments: { q: 'x' } } }] }, { tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'lookup', arguments: true } }] }],
        stream: true, expect: { named: ['tool_call.arguments'], keeps: (c) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"q":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '' },
      },
      'custom tool-call input that is not a string': {
        parts: [{ content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'apply_patch', input: { patch: 'x' } } }, { id: 'c2', type: 'custom', custom: { name: 'apply_patch', input: 42 } }] }],
        expect: { named: ['tool_call.arguments'], keeps: (c) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"patch":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '' },
      },
    },
  },
  OPENAI_RESPONSE_DROPPED: {
    table: openai.OPENAI_RESPONSE_DROPPED,
    decode: (c, dropped) => {
      // The request declares a web search: streamed url_citations then carry their cited text.
      const request: CanonicalRequest = { ...BASE, tools: [{ type: 'web_search' }] };
      if (!c.stream) return openai.decodeResponse('openai.responses', responsesAnswer(c.parts), route('openai-test'), request, dropped).content;
      const decoder = openai.streamDecoder('openai.responses', route('openai-test'), request, dropped);
      return collect(responsesEvents(c.parts as OutputItem[]).flatMap((frame) => decoder.decode((frame as { type: string }).type, JSON.stringify(frame)))).content;
    },
    cases: {
      'output items of server tools other than web search, and item kinds Relay does not know': { parts: otherItems, expect: { named: otherItemNames, keeps: keepsDone } },
      'the same in streamed answers': { parts: otherItems, stream: true, expect: { named: otherItemNames, keeps: keepsDone } },
      'annotations other than url_citation (file citations, file paths)': { parts: fileCited, expect: { named: ['file_citation'], keeps: keepsUrlCitation } },
      'annotations other than url_citation in streamed answers': { parts: fileCited, stream: true, expect: { named: ['file_citation'], keeps: keepsUrlCitation } },
      'message content other than output_text and refusal': {
        parts: [message({ type: 'output_text', text: 'Done.' }, { type: 'output_audio' })], expect: { named: ['output_audio'], keeps: keepsDone },
      },
      'function_call arguments and custom_tool_call input that are not a string': { parts: objectArguments, expect: { named: ['tool_call.arguments'], keeps: keepsObjectArguments } },
      'the same given whole at the end of a streamed item': { parts: objectArguments, stream: true, expect: { named: ['tool_call.arguments'], keeps: keepsObjectArguments } },
    },
  },
  ANTHROPIC_RESPONSE_DROPPED: {
    table: anthropic.ANTHROPIC_RESPONSE_DROPPED,
    decode: (c, dropped) => {
      if (!c.stream) return anthropic.decodeResponse('anthropic.messages', anthropicAnswer(c.parts), route('anthropic-test'), BASE, dropped).content;
      const decoder = anthropic.streamDecoder('anthropic.messages', route('anthropic-test'), BASE, dropped);
      return collect(anthropicFrames(c.parts as Array<Record<string, unknown>>).flatMap(([event, frame]) => decoder.decode(event, JSON.stringify(frame)))).content;
    },
    cases: {
      'server tool blocks other than web search, and block kinds Relay does not know': { parts: otherServerBlocks, expect: { named: otherServerNames, keeps: keepsText } },
      'the same in streamed answers': { parts: otherServerBlocks, stream: true, expect: { named: otherServerNames, keeps: keepsText } },
      'document citations of text (char, page and content block locations)': { parts: citedBlue, expect: { named: ['citations'], keeps: keepsBlue } },
      'document citations in streamed answers (citations_delta)': { parts: citedBlue, stream: true, expect: { named: ['citations'], keeps: keepsBlue } },
      'tool_use inputs that are not an object': { parts: oddToolUses, expect: { named: ['tool_use.input'], keeps: keepsOddToolUses('{}') } },
      'the same in streamed answers (the input of content_block_start, a partial_json that is not a string)': {
        parts: [...oddToolUses, { type: 'tool_use', id: 'toolu_4', name: 'lookup', input: {}, partial_json: [{ q: 'x' }, 7] }], stream: true,
        expect: { named: ['tool_use.input'], keeps: (c) => keepsOddToolUses('{}')(c.slice(0, 3)) && c[3]?.type === 'tool_call' && c[3].arguments === '{"q":"x"}' },
      },
    },
  },
  GEMINI_RESPONSE_DROPPED: {
    table: GEMINI_RESPONSE_DROPPED,
    decode: (c, dropped) => {
      if (!c.stream) return decodeGeminiResponse(geminiAnswer(c.parts), route('gemini-test'), BASE, dropped).content;
      const decoder = geminiStreamDecoder(route('gemini-test'), BASE, dropped);
      return collect(decoder.decode(undefined, JSON.stringify(geminiAnswer(c.parts)))).content;
    },
    cases: {
      'images (inlineData, fileData) in answers': {
        parts: [{ text: 'here' }, { inlineData: { mimeType: 'image/png', data: PNG.data } }, { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://b/cat.jpg' } }],
        expect: { mapped: (c) => c[1]?.type === 'image' && c[1].source.type === 'base64' && c[1].source.data === PNG.data && c[2]?.type === 'image' && c[2].source.type === 'url' && c[2].source.url === 'gs://b/cat.jpg' },
      },
      'images in streamed answers': { parts: [{ text: 'here' }, { inlineData: { mimeType: 'image/png', data: PNG.data } }], stream: true, expect: { named: ['image'] } },
      'inline and file data that is not an image (audio, ...)': {
        parts: [{ inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: 'AAAA' } }, { fileData: { mimeType: 'video/mp4', fileUri: 'gs://b/clip.mp4' } }], expect: { named: ['inlineData', 'fileData'] },
      },
      'images in thoughts (an image model\'s interim drafts)': {
        parts: [{ thought: true, inlineData: { mimeType: 'image/png', data: PNG.data } }, { inlineData: { mimeType: 'image/png', data: PNG.data } }], expect: { named: ['reasoning.image'] },
      },
      'executableCode and codeExecutionResult': {
        parts: [{ executableCode: { language: 'PYTHON', code: 'print(6*7)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '42\n' } }],
        expect: { mapped: (c) => c.length === 2 && c[0]?.type === 'text' && c[0].text === '```python\nprint(6*7)\n```' && c[1]?.type === 'text' && c[1].text === '```output\n42\n```' },
      },
      'functionCall args that are not an object, whole or streamed': {
        parts: [{ functionCall: { name: 'lookup', args: '{"q":"x"}' } }, { functionCall: { name: 'lookup', args: ['a'] } }, { functionCall: { name: 'lookup', args: 7 } }],
        expect: { named: ['functionCall.args'], keeps: keepsOddToolUses('{}') },
      },
      'executableCode and codeExecutionResult in thoughts': {
        parts: [{ thought: true, executableCode: { language: 'PYTHON', code: 'print(1)' } }, { thought: true, codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1' } }], stream: true,
        expect: { mapped: (c) => c.length === 1 && c[0]?.type === 'reasoning' && c[0].text === '\n\n```python\nprint(1)\n```\n\n\n\n```output\n1\n```\n\n' },
      },
    },
  },
  CONVERSE_RESPONSE_DROPPED: {
    table: bedrock.CONVERSE_RESPONSE_DROPPED,
    decode: (c, dropped) => {
      if (!c.stream) return bedrock.decodeResponse('bedrock.converse', converseAnswer(c.parts), route('bedrock-test'), BASE, dropped).content;
      const decoder = bedrock.streamDecoder('bedrock.converse', route('bedrock-test'), BASE, dropped);
      return collect((c.parts as Array<[string, unknown]>).flatMap(([event, payload]) => decoder.decode(event, JSON.stringify(payload)))).content;
    },
    cases: {
      'images in answers': {
        parts: [{ text: 'here' }, { image: { format: 'png', source: { bytes: PNG.data } } }, { image: { format: 'jpeg', source: { s3Location: { uri: 's3://b/cat.jpg' } } } }],
        expect: { mapped: (c) => c[1]?.type === 'image' && c[1].source.type === 'base64' && c[1].source.media_type === 'image/png' && c[1].source.data === PNG.data && c[2]?.type === 'image' && c[2].source.type === 'url' && c[2].source.url === 's3://b/cat.jpg' },
      },
      'images in streamed answers': {
        parts: converseEvents([['contentBlockStart', { contentBlockIndex: 0, start: { image: { format: 'png' } } }], ['contentBlockDelta', { contentBlockIndex: 0, delta: { image: { source: { bytes: PNG.data } } } }]]),
        stream: true, expect: { named: ['image'] },
      },
      citationsContent: {
        parts: [{ citationsContent: { content: [{ text: 'The sky is blue.' }], citations: [{ title: 'a.pdf', sourceContent: [{ text: 'blue sky' }], location: { documentChar: { documentIndex: 0, start: 0, end: 8 } } }] } }],
        expect: { named: ['citations'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'The sky is blue.' && c[0].citations === undefined },
      },
      'citation deltas in streamed answers': {
        parts: converseEvents([['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Blue.' } }], ['contentBlockDelta', { contentBlockIndex: 0, delta: { citation: { title: 'a.pdf', location: { documentPage: { documentIndex: 0, start: 1, end: 1 } } } } }]]),
        stream: true, expect: { named: ['citations'], keeps: (c) => c.length === 1 && c[0]?.type === 'text' && c[0].text === 'Blue.' },
      },
      'toolUse deltas whose input is not a string': {
        parts: converseEvents([
          ['contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'lookup' } } }], ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: { q: 'x' } } } }], ['contentBlockStop', { contentBlockIndex: 0 }],
          ['contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't2', name: 'lookup' } } }], ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: 7 } } }], ['contentBlockStop', { contentBlockIndex: 1 }],
        ]),
        stream: true, expect: { named: ['toolUse.input'], keeps: (c) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"q":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '' },
      },
      'toolUse inputs in answers that are not an object': {
        parts: [{ toolUse: { toolUseId: 't1', name: 'lookup', input: '{"q":"x"}' } }, { toolUse: { toolUseId: 't2', name: 'lookup', input: 7 } }],
        expect: { named: ['toolUse.input'], keeps: (c) => c.length === 2 && c[0]?.type === 'tool_call' && c[0].arguments === '{"q":"x"}' && c[1]?.type === 'tool_call' && c[1].arguments === '{}' },
      },
      'document, video and guardContent blocks, and block kinds Relay does not know': {
        parts: [{ document: { format: 'txt', name: 'n', source: { bytes: 'aGk=' } } }, { video: { format: 'mp4', source: { bytes: 'AAAA' } } }, { guardContent: { text: { text: 'x' } } }, { hologram: {} }],
        expect: { named: ['document', 'video', 'guardContent', 'hologram'] },
      },
    },
  },
};

for (const [name, decoder] of Object.entries(DECODERS)) {
  t.test(`${name}: each rule is named or mapped`, async (t) => {
    for (const [entry, c] of Object.entries(decoder.cases)) {
      const dropped: string[] = [];
      const content = decoder.decode(c, dropped);
      if ('named' in c.expect) {
        t.same([...new Set(dropped)].sort(), [...c.expect.named].sort(), `${entry}: named ${c.expect.named.join(', ')}`);
        if (c.expect.keeps) t.ok(c.expect.keeps(content), `${entry}: keeps ${JSON.stringify(content).slice(0, 160)}`);
      } else {
        t.ok(c.expect.mapped(content), `${entry}: mapped ${JSON.stringify(content).slice(0, 160)}`);
        t.same(dropped, [], `${entry}: nothing named`);
      }
    }
  });
}

t.test('every entry of every DROPPED table has a case', async (t) => {
  for (const [name, { table, cases }] of [...Object.entries(ENCODERS), ...Object.entries(INBOUND), ...Object.entries(RESPONSES_RENDERED), ...Object.entries(DECODERS)]) {
    t.same(Object.keys(table).filter((entry) => !(entry in cases)), [], `${name}: every entry has a case`);
    t.same(Object.keys(cases).filter((entry) => !(entry in table)), [], `${name}: every case is an entry`);
  }
});
