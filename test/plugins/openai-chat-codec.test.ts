// The Chat decoders (plugins/vendor-openai/codec/chat-response.ts, chat-stream.ts) on answers of
// OpenAI-compatible servers that do not send content as a string: Mistral's Magistral models send
// message.content (and delta.content) as an array of parts, thinking then text. Text parts are
// text, thinking parts reasoning, other kinds named; tool-call arguments that are an object are
// sent as their JSON, any other non-string value named.
import t from 'tap';
import { decodeChatResponse } from '../../plugins/vendor-openai/codec/chat-response.ts';
import { chatStreamDecoder } from '../../plugins/vendor-openai/codec/chat-stream.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { collect } from '../translation/harness.ts';

const thinking = (text: string) => ({ type: 'thinking', thinking: [{ type: 'text', text }] });
const answer = (message: Record<string, unknown>, finish = 'stop') => ({ id: 'c1', model: 'magistral-medium-2509', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 3, completion_tokens: 9 } });

/** The canonical answer of a Chat stream whose chunks carry `deltas`, then finish. */
function streamed(deltas: unknown[], dropped: string[] = [], finish = 'stop') {
  const decoder = chatStreamDecoder(fakeRoute(), undefined, dropped);
  const chunk = (delta: unknown, finish_reason: string | null = null) => JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason }] });
  const events = [...deltas.map((d) => chunk(d)), chunk({}, finish)].flatMap((data) => decoder.decode(undefined, data));
  return collect([...events, ...decoder.decode(undefined, '[DONE]')]);
}

t.test('a Magistral answer: thinking parts are reasoning, text parts text', async (t) => {
  const dropped: string[] = [];
  const response = decodeChatResponse(answer({ content: [thinking('Two and '), thinking('two.'), { type: 'text', text: 'Four.' }] }), fakeRoute(), undefined, dropped);
  t.same(response.content, [
    { type: 'reasoning', text: 'Two and two.', origin: 'openai' },
    { type: 'text', text: 'Four.' },
  ]);
  t.same(dropped, [], 'nothing lost, nothing named');
});

t.test('streamed: content arrays open a reasoning part, then a text part', async (t) => {
  const dropped: string[] = [];
  const response = streamed([{ role: 'assistant', content: [thinking('Two and ')] }, { content: [thinking('two.')] }, { content: [{ type: 'text', text: 'Fo' }] }, { content: 'ur.' }], dropped);
  t.same(response.content, [
    { type: 'reasoning', text: 'Two and two.', origin: 'openai' },
    { type: 'text', text: 'Four.' },
  ]);
  t.same(dropped, []);
});

t.test('parts of another kind are named by their type, whole and streamed', async (t) => {
  const dropped: string[] = [];
  const response = decodeChatResponse(answer({ content: [{ type: 'text', text: 'See ' }, { type: 'reference', reference_ids: [1] }, { type: 'text', text: 'this.' }] }), fakeRoute(), undefined, dropped);
  t.same(response.content, [{ type: 'text', text: 'See this.' }]);
  t.same(dropped, ['reference']);
  const inStream: string[] = [];
  t.same(streamed([{ content: [{ type: 'image_url', image_url: 'https://a.example/i.png' }, { type: 'text', text: 'Hi.' }] }], inStream).content, [{ type: 'text', text: 'Hi.' }]);
  t.same(inStream, ['image_url']);
});

t.test('tool-call arguments: a string as is, an object as its JSON, another value named', async (t) => {
  const dropped: string[] = [];
  const call = (id: string, args: unknown) => ({ id, type: 'function', function: { name: 'lookup', arguments: args } });
  const response = decodeChatResponse(answer({ content: null, tool_calls: [call('a', '{"q":1}'), call('b', { q: 2 }), call('c', 3)] }, 'tool_calls'), fakeRoute(), undefined, dropped);
  t.same(response.content.map((p) => p.type === 'tool_call' && p.arguments), ['{"q":1}', '{"q":2}', '']);
  t.same(dropped, ['tool_call.arguments']);
  const inStream: string[] = [];
  const stream = streamed([{ tool_calls: [{ index: 0, ...call('a', { q: 2 }) }] }, { tool_calls: [{ index: 1, ...call('b', false) }] }], inStream, 'tool_calls');
  t.same(stream.content.map((p) => p.type === 'tool_call' && p.arguments), ['{"q":2}', '']);
  t.same(inStream, ['tool_call.arguments']);
});
