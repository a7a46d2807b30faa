// withCacheBreakpoints on Messages bodies an encoder could write: blocks that may not carry
// cache_control (thinking, server-tool blocks) are passed over for the one before them, and a body
// with nothing markable is left as it is.
import t from 'tap';
import { withCacheBreakpoints } from '../../plugins/vendor-anthropic/codec/cache-breakpoints.ts';

const EPHEMERAL = { type: 'ephemeral' };

t.test('the last markable block of the last message: thinking and server-tool blocks are passed over', async (t) => {
  const body = withCacheBreakpoints({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'search' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }] },
    ],
  }) as any;
  t.same(body.messages[1].content[0].cache_control, EPHEMERAL);
  t.equal(body.messages[1].content[1].cache_control, undefined);
  t.equal(body.messages[1].content[2].cache_control, undefined);
  t.same(body.messages[0].content[0].cache_control, EPHEMERAL, 'the user message before: where the previous turn ended');
  const thinkingOnly = withCacheBreakpoints({ messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }] }) as any;
  t.equal(thinkingOnly.messages[0].content[0].cache_control, undefined, 'a thinking block is never marked');
});

t.test('a turn of many parallel tool calls: the previous turn\'s end is still marked exactly', async (t) => {
  const calls = Array.from({ length: 30 }, (_, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: 'shell', input: {} }));
  const results = calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: 'ok' }));
  const body = withCacheBreakpoints({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'shell', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'ok' }] },
      { role: 'assistant', content: calls },
      { role: 'user', content: results },
    ],
  }) as any;
  const marked = body.messages.flatMap((m: any, i: number) => m.content.flatMap((b: any, j: number) => (b.cache_control ? [`${i}.${j}`] : [])));
  t.same(marked, ['2.0', '4.29'], 'the previous turn\'s last block, 60 blocks back, and this turn\'s');
});

t.test('no tools, no system, no messages: nothing to mark', async (t) => {
  t.same(withCacheBreakpoints({ model: 'claude', max_tokens: 1, messages: [] }), { model: 'claude', max_tokens: 1, messages: [] });
});
