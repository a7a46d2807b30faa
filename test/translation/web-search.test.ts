// Web search in the codecs, past what test/e2e/web-search-translated.test.ts covers over HTTP:
// canonical stream indexes stay ordered around a search, pause_turn reaches a Messages client
// (streamed and not), a failed search keeps its meaning in every client shape, and a search
// sealed for one client shape opens back to the same canonical part.
import t from 'tap';
import type { CanonicalResponse, StreamEvent, WebSearchCallPart } from '../../core/plugin-api/canonical.ts';
import { messagesCodec } from '../../plugins/wire-vendor-b/codec/index.ts';
import { responsesCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import { sseText } from '../support/sse-frames.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { collect, context, decodeStream, encodeStream, streamProblems } from './harness.ts';
import { responseToEvents } from '../../core/pipeline/response-events.ts';
import * as anthropic from '../../plugins/vendor-anthropic/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';

const USAGE = { input_tokens: 5, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
const REQUEST = { model: 'm', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'news?' }] }], tools: [{ type: 'web_search' as const }] };
const USE = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'news' } };

function anthropicStream(stop: string, withResult: boolean): string {
  const f = (type: string, data: object) => ({ event: type, data: { type, ...data } });
  return sseText([
    f('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
    f('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    f('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Searching.' } }),
    f('content_block_stop', { index: 0 }),
    f('content_block_start', { index: 1, content_block: { ...USE, input: {} } }),
    f('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"news"}' } }),
    f('content_block_stop', { index: 1 }),
    ...(withResult ? [
      f('content_block_start', { index: 2, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } } }),
      f('content_block_stop', { index: 2 }),
      f('content_block_start', { index: 3, content_block: { type: 'text', text: '' } }),
      f('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'No luck.' } }),
      f('content_block_stop', { index: 3 }),
    ] : []),
    f('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 7 } }),
    f('message_stop', {}),
  ]);
}

t.test('an Anthropic stream with a search keeps canonical indexes ordered: each part opens after the last closed', async (t) => {
  const events = decodeStream('anthropic.messages', anthropicStream('end_turn', true), undefined, REQUEST);
  const starts = events.filter((e): e is Extract<StreamEvent, { type: 'part_start' }> => e.type === 'part_start');
  t.same(starts.map((e) => [e.index, e.part.type]), [[0, 'text'], [1, 'web_search_call'], [2, 'text']]);
  const open = new Set<number>();
  for (const e of events) {
    if (e.type === 'part_start') { t.equal(open.size, 0, `part ${e.index} opens with none open`); open.add(e.index); }
    if (e.type === 'part_end') open.delete(e.index);
  }
  t.match(starts[1].part, { id: 'srvtoolu_1', query: 'news', status: 'failed', origin: 'anthropic' });
});

t.test('a failed search: a failed web_search_call item for Responses, a web_search_tool_result_error for Messages', async (t) => {
  const failed: WebSearchCallPart = { type: 'web_search_call', id: 'ws_1', query: 'news', status: 'failed', origin: 'openai', raw: { id: 'ws_1', type: 'web_search_call', status: 'failed', action: { type: 'search', query: 'news' } } };
  const response: CanonicalResponse = { id: 'r1', model: 'm', content: [failed, { type: 'text', text: 'No luck.' }], stop_reason: 'end_turn', usage: USAGE };
  const responses = responsesCodec.encodeResponse(response, context(REQUEST)) as any;
  t.same(openapiProblems('Response', responses), []);
  t.match(responses.output[0], { id: 'ws_1', type: 'web_search_call', status: 'failed' });
  const messages = messagesCodec.encodeResponse(response, context(REQUEST)) as any;
  t.same(messages.content[1], { type: 'web_search_tool_result', tool_use_id: messages.content[0].id, content: { type: 'web_search_tool_result_error', error_code: 'unavailable' } });
});

t.test('pause_turn reaches a Messages client, non-streamed and streamed, the open search without its result', async (t) => {
  const events = decodeStream('anthropic.messages', anthropicStream('pause_turn', false), undefined, REQUEST);
  const paused = collect(events);
  t.equal(paused.stop_reason, 'pause_turn');
  t.match(paused.content[1], { type: 'web_search_call', status: 'in_progress', query: 'news' });
  // An OpenAI-origin search left open, as the Messages client sees it (Anthropic's own goes back as its raw blocks).
  const foreign: CanonicalResponse = { ...paused, content: [paused.content[0], { type: 'web_search_call', id: 'ws_9', query: 'news', status: 'in_progress', origin: 'openai', raw: { id: 'ws_9' } }] };
  const json = messagesCodec.encodeResponse(foreign, context(REQUEST)) as any;
  t.equal(json.stop_reason, 'pause_turn');
  t.same(json.content.map((b: any) => b.type), ['text', 'server_tool_use']);
  const sse = encodeStream('anthropic.messages', context(REQUEST), events);
  t.same(await streamProblems('anthropic.messages', sse), []);
  const message = await sdkFinalMessage(sse);
  t.equal(message.stop_reason, 'pause_turn');
  t.same(message.content.map((b) => b.type), ['text', 'server_tool_use'], 'Anthropic\'s own open search goes back as its block');
  t.same((message.content[1] as { input: unknown }).input, { query: 'news' });
});

t.test('a search sealed for one client shape opens back to the same canonical part', async (t) => {
  const anthropicSearch: WebSearchCallPart = {
    type: 'web_search_call', id: 'srvtoolu_1', query: 'news', sources: [{ url: 'https://example.com/a' }], status: 'completed', origin: 'anthropic',
    raw: [USE, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://example.com/a', title: 'A', encrypted_content: 'enc', page_age: null }] }],
  };
  const openaiSearch: WebSearchCallPart = {
    type: 'web_search_call', id: 'ws_1', query: 'news', sources: [{ url: 'https://example.com/a', title: 'A' }], status: 'completed', origin: 'openai',
    raw: { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'news', sources: [{ type: 'url', url: 'https://example.com/a' }] } },
  };
  const answer = (part: WebSearchCallPart): CanonicalResponse => ({ id: 'r1', model: 'm', content: [part], stop_reason: 'end_turn', usage: USAGE });
  // Responses client, Anthropic's search: the item comes back in the next request's input.
  const item = (responsesCodec.encodeResponse(answer(anthropicSearch), context(REQUEST)) as any).output[0];
  const viaResponses = responsesCodec.decodeRequest({ model: 'm', input: [{ role: 'user', content: 'news?' }, item, { role: 'user', content: 'more' }] });
  t.match(viaResponses.messages[1].content[0], { id: 'srvtoolu_1', origin: 'anthropic', raw: anthropicSearch.raw });
  // Messages client, OpenAI's search: the blocks come back in the next request's messages.
  const blocks = (messagesCodec.encodeResponse(answer(openaiSearch), context(REQUEST)) as any).content;
  const viaMessages = messagesCodec.decodeRequest({ model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'news?' }, { role: 'assistant', content: blocks }, { role: 'user', content: 'more' }] });
  t.match(viaMessages.messages[1].content[0], { id: 'ws_1', origin: 'openai', raw: openaiSearch.raw, status: 'completed', sources: [{ url: 'https://example.com/a' }] });
  t.same(messagesCodec.droppedParameters?.({ model: 'm', max_tokens: 9, messages: [{ role: 'assistant', content: blocks }] }), [], 'the blocks are no dropped history');
});

t.test('an upstream that answers a streamed request with one JSON body: the search and the citations are streamed too', async (t) => {
  const search: WebSearchCallPart = { type: 'web_search_call', id: 'ws_1', query: 'news', status: 'completed', origin: 'openai', raw: { id: 'ws_1' } };
  const response: CanonicalResponse = {
    id: 'r1', model: 'm', stop_reason: 'end_turn', usage: USAGE,
    content: [search, { type: 'text', text: 'Relay ships.', citations: [{ type: 'url_citation', url: 'https://example.com/r', title: 'R', start_index: 0, end_index: 5 }] }],
  };
  t.same(collect(responseToEvents(response)).content, response.content);
});

t.test('Anthropic: a paused search continues as the last message; followed by more conversation it is left out, the turns joined', async (t) => {
  const open: WebSearchCallPart = { type: 'web_search_call', id: 'srvtoolu_1', status: 'in_progress', origin: 'anthropic', raw: [USE] };
  const paused = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Searching.' }, open] };
  const dropped: string[] = [];
  const continued = anthropic.encodeRequest('anthropic.messages', { ...REQUEST, messages: [...REQUEST.messages, paused] }, fakeRoute(), dropped) as any;
  t.same(continued.messages[1].content, [{ type: 'text', text: 'Searching.' }, USE], 'the continuation carries the open search');
  t.same(dropped, []);
  const onlySearch = { role: 'assistant' as const, content: [open] };
  const moved = anthropic.encodeRequest('anthropic.messages', { ...REQUEST, messages: [...REQUEST.messages, onlySearch, { role: 'user', content: [{ type: 'text', text: 'never mind' }] }] }, fakeRoute(), dropped) as any;
  t.same(moved.messages, [{ role: 'user', content: [{ type: 'text', text: 'news?' }, { type: 'text', text: 'never mind' }] }], 'no empty assistant turn, no dangling search');
  t.same(dropped, ['history.web_search_call']);
});
