// An Anthropic stream cut short inside a web search's input (input_json_delta): the stream fails
// or ends mid-JSON. The search is still reported (Anthropic may have billed it), with its query
// when that string is whole up to its closing quote, else as `incomplete`: never as a search for
// nothing. What each client shape then carries is honest: a Responses `web_search_call` item with
// `action.query` or `failed` without one, and no replay of an input Relay never saw.
import t from 'tap';
import type { StreamEvent, WebSearchCallPart } from '../../core/plugin-api/canonical.ts';
import { responsesCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import * as anthropic from '../../plugins/vendor-anthropic/codec/index.ts';
import { sseFrames, sseText } from '../support/sse-frames.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { canonicalProblems, context, decodeStream, encodeStream, streamProblems } from './harness.ts';

const REQUEST = { model: 'm', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'news?' }] }], tools: [{ type: 'web_search' as const }] };
type Ending = 'error event' | 'connection closed' | 'message_stop';

/** A stream that answers some text, opens a search, sends `pieces` of its input, and ends so. */
function cutStream(pieces: string[], ending: Ending): string {
  const f = (type: string, data: object) => ({ event: type, data: { type, ...data } });
  return sseText([
    f('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'c', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
    f('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    f('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Searching.' } }),
    f('content_block_stop', { index: 0 }),
    f('content_block_start', { index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }),
    ...pieces.map((partial_json) => f('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json } })),
    ...(ending === 'error event' ? [f('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })] : []),
    ...(ending === 'message_stop' ? [f('message_delta', { delta: { stop_reason: 'pause_turn', stop_sequence: null }, usage: { output_tokens: 7 } }), f('message_stop', {})] : []),
  ]);
}

function searchOf(events: StreamEvent[]): WebSearchCallPart | undefined {
  const start = events.find((e) => e.type === 'part_start' && e.part.type === 'web_search_call');
  return start?.type === 'part_start' ? start.part as WebSearchCallPart : undefined;
}

const ENDINGS: Ending[] = ['error event', 'connection closed', 'message_stop'];

t.test('a query whole up to its closing quote stands, however the stream broke off', async (t) => {
  const cases: Array<[string, string[], string]> = [
    ['the object not closed', ['{"query": ', '"relay news"'], 'relay news'],
    ['a comma after it', ['{"query":"relay news",'], 'relay news'],
    ['escapes in it', ['{"query":"say \\"hi\\" \\u00e9', '"'], 'say "hi" é'],
    ['after another member', ['{"max":[1,{"a":"}"}],"query":"x"'], 'x'],
  ];
  for (const ending of ENDINGS) {
    for (const [what, pieces, query] of cases) {
      const events = decodeStream('anthropic.messages', cutStream(pieces, ending), undefined, REQUEST);
      const search = searchOf(events);
      t.match(search, { id: 'srvtoolu_1', query, status: 'in_progress', origin: 'anthropic' }, `${ending}, ${what}`);
      // Replayed to Anthropic (a paused turn continued), the block carries the query it had.
      t.same((search?.raw as Array<{ input?: unknown }> | undefined)?.[0]?.input, { query }, `${ending}, ${what}: its raw block's input`);
      t.same(canonicalProblems('event', events.find((e) => e.type === 'part_start' && e.part.type === 'web_search_call')), [], `${ending}, ${what}: a canonical event`);
      if (ending !== 'message_stop') t.equal(events.at(-1)?.type, 'error', `${ending}: the stream still ends in an error`);
    }
  }
});

t.test('a query cut inside its string (or never reached) is an incomplete search, not an empty one', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['cut mid-string', ['{"query":"relay ne']],
    ['cut on an escape', ['{"query":"relay \\']],
    ['cut in the key', ['{"que']],
    ['no input at all', []],
  ];
  for (const ending of ENDINGS) {
    for (const [what, pieces] of cases) {
      const events = decodeStream('anthropic.messages', cutStream(pieces, ending), undefined, REQUEST);
      const search = searchOf(events);
      t.same(search, { type: 'web_search_call', id: 'srvtoolu_1', status: 'incomplete', origin: 'anthropic', raw: [] }, `${ending}, ${what}`);
    }
  }
});

t.test('a block stopped with input JSON that does not parse: its whole query kept, else incomplete', async (t) => {
  const stopped = (partial: string) => cutStream([partial], 'connection closed').replace(/$/, sseText([{ event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } }]));
  t.match(searchOf(decodeStream('anthropic.messages', stopped('{"query":"news"'), undefined, REQUEST)), { query: 'news', status: 'in_progress' });
  t.match(searchOf(decodeStream('anthropic.messages', stopped('{"query":"ne'), undefined, REQUEST)), { status: 'incomplete' });
  const whole = decodeStream('anthropic.messages', stopped('{}'), undefined, REQUEST);
  t.match(searchOf(whole), { status: 'in_progress', raw: [{ input: {} }] }, 'an input Anthropic closed whole stands as it is');
});

t.test('a Responses client: the recovered query in action.query, an incomplete search a failed item without one', async (t) => {
  for (const [pieces, item] of [
    [['{"query":"relay news"'], { type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'relay news' } }],
    [['{"query":"relay ne'], { type: 'web_search_call', status: 'failed', action: { type: 'search' } }],
  ] as const) {
    const sse = encodeStream('openai.responses', context(REQUEST), decodeStream('anthropic.messages', cutStream([...pieces], 'error event'), undefined, REQUEST));
    t.same(await streamProblems('openai.responses', sse), [], 'a stream OpenAI\'s SDK reads');
    const frames = sseFrames(sse).map((f) => JSON.parse(f.data) as Record<string, any>);
    const done = frames.find((f) => f.type === 'response.output_item.done' && f.item.type === 'web_search_call')?.item;
    t.match(done, item);
    t.same(openapiProblems('WebSearchToolCall', done), [], 'an item of OpenAI\'s schema');
    if (item.status === 'failed') {
      t.notOk('query' in done.action, 'no query: not an empty one');
      t.notOk(frames.some((f) => f.type === 'response.web_search_call.completed'), 'never said to have completed');
      // Sent back, it is not replayed to Anthropic with an input Relay never saw: left out, named.
      const dropped: string[] = [];
      const part = responsesCodec.decodeRequest({ model: 'm', input: [{ role: 'user', content: 'news?' }, done, { role: 'user', content: 'more' }] });
      const body = anthropic.encodeRequest('anthropic.messages', part, fakeRoute(), dropped) as { messages: Array<{ content: Array<{ type: string }> }> };
      t.notOk(body.messages.some((m) => m.content.some((b) => b.type === 'server_tool_use')), 'no server_tool_use replayed');
      t.same(dropped, ['history.web_search_call']);
    }
  }
});
