// The input-token estimate a translated Messages stream names in message_start
// (core/canonical/input-token-estimate.ts): bytes / 4 of every text the model reads, plus a fixed
// count per image; reasoning from earlier turns is left out.
import t from 'tap';
import { estimateInputTokens, IMAGE_TOKENS } from '../../core/canonical/input-token-estimate.ts';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';

const text = (s: string) => ({ type: 'text' as const, text: s });

t.test('counts system, messages, tool calls, results and definitions', async (t) => {
  const request: CanonicalRequest = {
    model: 'm',
    system: [text('a'.repeat(40))],
    messages: [
      { role: 'user', content: [text('b'.repeat(40)), { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'r'.repeat(4000) }, { type: 'tool_call', id: 'c', name: 'ls', arguments: '{"p":"x"}' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'c', content: [text('c'.repeat(29))] }] },
    ],
    tools: [{ type: 'function', name: 'ls', description: 'list', parameters: { type: 'object' } }],
  };
  // 40 + 40 + (2 + 9) + 29 + (2 + 4 + 17) = 143 bytes -> 36 tokens, and one image.
  t.equal(estimateInputTokens(request), 36 + IMAGE_TOKENS);
});

t.test('multi-byte text counts its UTF-8 bytes; an empty request is 1', async (t) => {
  t.equal(estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: [text('é'.repeat(8))] }] }), 4);
  t.equal(estimateInputTokens({ model: 'm', messages: [] }), 1);
});

t.test('a search of the history counts what the vendor replays; a web search tool counts nothing', async (t) => {
  const raw = [{ type: 'web_search_tool_result', content: [{ encrypted_content: 'e'.repeat(400) }] }];
  const request: CanonicalRequest = {
    model: 'm', tools: [{ type: 'web_search', max_uses: 2 }],
    messages: [{ role: 'assistant', content: [{ type: 'web_search_call', id: 's', origin: 'anthropic', raw }] }],
  };
  t.equal(estimateInputTokens(request), Math.ceil(Buffer.byteLength(JSON.stringify(raw)) / 4));
});
