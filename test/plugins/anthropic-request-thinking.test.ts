// Requests Anthropic is documented to refuse are not sent (plugins/vendor-anthropic
// messages-request.ts, thinking-budget.ts): thinking in a tool loop whose tool-calling turn has
// no signed thinking; thinking on a model the catalog marks reasoning: false;
// whitespace-only stop sequences; a max_tokens above Claude's output limit.
import t from 'tap';
import { encodeMessagesRequest } from '../../plugins/vendor-anthropic/codec/messages-request.ts';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import type { Route } from '../../core/plugin-api.ts';

const route = (reasoning?: boolean, maxOutputTokens?: number) =>
  ({ upstreamModel: 'claude', ...(reasoning === undefined && maxOutputTokens === undefined ? {} : { model: { spec: { reasoning: reasoning ?? false, maxOutputTokens } } }) }) as unknown as Route;
const tools = [{ type: 'function', name: 'ls', parameters: { type: 'object', properties: {} } }];
const toolLoop = (assistantFirst: object[]) => [
  { role: 'user', content: [{ type: 'text', text: 'list' }] },
  { role: 'assistant', content: [...assistantFirst, { type: 'tool_call', id: 'call_1', name: 'ls', arguments: '{}', tool_kind: 'function' }] },
  { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'call_1', content: [{ type: 'text', text: 'a.txt' }] }] },
];
const encode = (request: Partial<CanonicalRequest>, r = route()) =>
  encodeMessagesRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], ...request } as CanonicalRequest, r) as Record<string, any>;

t.test('a tool loop whose tool-calling turn has no signed thinking is sent without thinking', async (t) => {
  const unsigned = encode({ tools, reasoning: { effort: 'low' }, messages: toolLoop([]) } as any);
  t.equal(unsigned.thinking, undefined, 'Chat history: no thinking block to open the turn');
  const signed = encode({ tools, reasoning: { effort: 'low' }, messages: toolLoop([{ type: 'reasoning', text: 'hmm', signature: 'sig', origin: 'anthropic' }]) } as any);
  t.same(signed.thinking, { type: 'enabled', budget_tokens: 4096 }, 'the turn opens with its signed thinking: kept');
  t.equal(signed.messages[1].content[0].type, 'thinking');
  const fresh = encode({ tools, reasoning: { effort: 'low' } } as any);
  t.same(fresh.thinking, { type: 'enabled', budget_tokens: 4096 }, 'a new question is not a tool loop');
});

t.test('reasoning turns thinking on only for reasoning models', async (t) => {
  t.equal(encode({ reasoning: { summary: true } } as any, route(false)).thinking, undefined, "Codex's summary-only reasoning on a non-reasoning model");
  t.same(encode({ reasoning: { summary: true } } as any, route(true)).thinking, { type: 'adaptive' });
  t.equal(encode({ reasoning: { effort: 'low' } } as any, route(false)).thinking, undefined, 'nor an explicit effort: the model does not reason (issue 38 item 3)');
  t.same(encode({ reasoning: { effort: 'low' } } as any, route(true)).thinking, { type: 'enabled', budget_tokens: 4096 }, 'an explicit effort on a reasoning model is honoured');
});

t.test('whitespace-only stop sequences are left out', async (t) => {
  t.same(encode({ stop: ['\n', 'END', ' \t'] }).stop_sequences, ['END']);
  t.equal(encode({ stop: ['\n'] }).stop_sequences, undefined);
});

t.test('max_tokens derived from an effort stays within Claude output limits', async (t) => {
  const xhigh = encode({ reasoning: { effort: 'xhigh' } } as any);
  t.same([xhigh.max_tokens, xhigh.thinking.budget_tokens], [64_000, 59_904]);
  const high = encode({ reasoning: { effort: 'high' } } as any);
  t.same([high.max_tokens, high.thinking.budget_tokens], [36_864, 32_768], 'below the cap: unchanged');
  const asked = encode({ reasoning: { effort: 'xhigh' }, max_output_tokens: 100_000 } as any);
  t.equal(asked.max_tokens, 100_000, "the client's own max_output_tokens is the client's");
});

t.test("the catalog's maxOutputTokens is the max_tokens when the client gives none", async (t) => {
  t.equal(encode({}, route(true, 64_000)).max_tokens, 64_000, 'no reasoning: the whole limit (Codex sends no max_output_tokens)');
  t.equal(encode({}).max_tokens, 4096, 'without it: 4096 as before');
  const low = encode({ reasoning: { effort: 'low' } } as any, route(true, 64_000));
  t.same([low.max_tokens, low.thinking.budget_tokens], [8192, 4096]);
  const xhigh = encode({ reasoning: { effort: 'xhigh' } } as any, route(true, 32_000));
  t.same([xhigh.max_tokens, xhigh.thinking.budget_tokens], [32_000, 27_904], 'the model limit caps budget + answer');
  const tight = encode({ reasoning: { effort: 'low' } } as any, route(true, 5000));
  t.same([tight.max_tokens, tight.thinking], [5000, undefined], 'no room for a budget and an answer: no thinking');
  t.equal(encode({ max_output_tokens: 100 }, route(true, 64_000)).max_tokens, 100, "the client's own limit wins");
});
