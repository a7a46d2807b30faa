// Token counts an upstream reports are whole numbers from 0 to MAX_TOKEN_COUNT, whichever vendor's
// reader reads them, and so is whatever usage a request records (a plugin's own reader included):
// one absurd count (1e20) fits no log column and would hold a token rate limit shut.
import t from 'tap';
import { MAX_TOKEN_COUNT, tokenCount, usageFromMessages, type Usage } from '../../core/plugin-api/canonical.ts';
import { RequestRecord } from '../../core/pipeline/request-record.ts';
import { usageFromChat, usageFromResponses } from '../../plugins/vendor-openai/codec/usage.ts';
import { usageFromGemini } from '../../plugins/vendor-google/codec/usage.ts';
import { usageFromConverse } from '../../plugins/vendor-bedrock/codec/usage.ts';

t.test('tokenCount: whole, non-negative, bounded', async (t) => {
  t.equal(tokenCount(1e20), MAX_TOKEN_COUNT);
  t.equal(tokenCount(MAX_TOKEN_COUNT + 0.4), MAX_TOKEN_COUNT);
  t.equal(tokenCount(2.6), 3);
  for (const value of [-5, Infinity, NaN, '12', null, undefined]) t.equal(tokenCount(value), 0, String(value));
});

t.test('every vendor reader bounds each count, sums included', async (t) => {
  const big = 1e20;
  const readers: Array<[string, Usage | null]> = [
    ['Chat', usageFromChat({ prompt_tokens: big, completion_tokens: big, prompt_tokens_details: { cached_tokens: big }, completion_tokens_details: { reasoning_tokens: big } })],
    ['Responses', usageFromResponses({ input_tokens: big, output_tokens: big, input_tokens_details: { cached_tokens: big }, output_tokens_details: { reasoning_tokens: big } })],
    ['Messages', usageFromMessages({ input_tokens: big, output_tokens: big, cache_read_input_tokens: big, cache_creation_input_tokens: big })],
    ['Gemini', usageFromGemini({ promptTokenCount: big, toolUsePromptTokenCount: big, candidatesTokenCount: big, thoughtsTokenCount: big, cachedContentTokenCount: big })],
    ['Converse', usageFromConverse({ inputTokens: big, outputTokens: big, cacheReadInputTokens: big, cacheWriteInputTokens: big })],
  ];
  for (const [name, usage] of readers) {
    t.equal(usage?.input_tokens, MAX_TOKEN_COUNT, `${name}: input`);
    t.equal(usage?.output_tokens, MAX_TOKEN_COUNT, `${name}: output`);
    t.equal(usage?.cache_read_tokens, MAX_TOKEN_COUNT, `${name}: cache reads`);
  }
});

t.test('a request records its usage bounded, however it was read', async (t) => {
  const record = new RequestRecord('req-1', 'openai.chat', 'model-a', false);
  record.usage = { input_tokens: 1e20, output_tokens: -3, cache_read_tokens: 1.5, cache_write_tokens: 0, reasoning_tokens: 7, web_search_requests: 1e12 };
  t.same(record.usage, { input_tokens: MAX_TOKEN_COUNT, output_tokens: 0, cache_read_tokens: 2, cache_write_tokens: 0, reasoning_tokens: 7, web_search_requests: MAX_TOKEN_COUNT });
  const sane: Usage = { input_tokens: 3, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
  record.usage = sane;
  t.equal(record.usage, sane, 'a usage in range is kept as it is');
  record.usage = null;
  t.equal(record.usage, null);
});
