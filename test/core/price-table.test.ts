// The shipped price table: every model's cost for a request with cache reads and writes (5-minute
// and 1-hour), against figures computed by hand from the vendors' pages, not by costOf; and the
// resolution of dated snapshots, aliases and cloud resellers' names to the table's entries.
import t from 'tap';
import type { Usage } from '../../core/canonical/types.ts';
import { costMicros } from '../../core/observer/cost.ts';
import { tableEntryFor } from '../../core/pricing/price-lookup.ts';
import { PRICE_TABLE } from '../../core/pricing/table.ts';
import { usageFromMessages } from '../../core/plugin-api/canonical.ts';

// A prompt of 60,000 tokens: 5,000 fresh, 40,000 read from the cache, 15,000 written to it (5,000
// of them for an hour); 4,000 output tokens, 1,000 of them reasoning.
const SHORT: Usage = { input_tokens: 60_000, cache_read_tokens: 40_000, cache_write_tokens: 15_000, cache_write_1h_tokens: 5_000, output_tokens: 4_000, reasoning_tokens: 1_000 };
// A prompt of 400,000 tokens, past every long-context threshold (100K, 200K, 272K): 50,000 fresh,
// 300,000 read, 50,000 written (20,000 for an hour); 10,000 output.
const LONG: Usage = { input_tokens: 400_000, cache_read_tokens: 300_000, cache_write_tokens: 50_000, cache_write_1h_tokens: 20_000, output_tokens: 10_000, reasoning_tokens: 2_000 };

// [model, micro-USD for SHORT, micro-USD for LONG]. Anthropic: fresh x input + read x cache hit +
// 5m writes x 5m rate + 1h writes x 1h rate + output x output, e.g. claude-sonnet-4-6:
// 5,000x3 + 40,000x0.30 + 10,000x3.75 + 5,000x6 + 4,000x15 = 154,500. Sonnet 4 and 4.5 above 200K
// and Haiku 5.5 above 100K: every token at the long-context rates. OpenAI bills no cache write (the
// written tokens are input), reads at the cached rate (input when none is listed); GPT-5.4 and
// GPT-5.5 above 272K: twice the input rates, 1.5 times output. Computed from the pages' rates with
// Python's decimal module.
const EXPECTED: Array<[string, number, number]> = [
  ['claude-fable-5-1', 485000, 1850000],
  ['claude-mythos-5-1', 485000, 1850000],
  ['claude-fable-5', 515000, 2075000],
  ['claude-mythos-5', 515000, 2075000],
  ['claude-opus-5-5', 198000, 770000],
  ['claude-opus-5', 257500, 1037500],
  ['claude-opus-4-8', 257500, 1037500],
  ['claude-opus-4-7', 257500, 1037500],
  ['claude-opus-4-6', 257500, 1037500],
  ['claude-opus-4-5', 257500, 1037500],
  ['claude-opus-4-1', 772500, 3112500],
  ['claude-opus-4', 772500, 3112500],
  ['claude-3-opus', 772500, 3112500],
  ['claude-sonnet-5-5', 99000, 385000],
  ['claude-sonnet-5', 103000, 415000],
  ['claude-sonnet-4-6', 154500, 622500],
  ['claude-sonnet-4-5', 154500, 1170000],
  ['claude-sonnet-4', 154500, 1170000],
  ['claude-3-7-sonnet', 154500, 622500],
  ['claude-haiku-5-5', 5150, 103750],
  ['claude-haiku-4-5', 51500, 207500],
  ['claude-3-5-haiku', 41200, 166000],
  ['claude-3-haiku', 12950, 53000],
  ['gpt-5.5', 240000, 1750000],
  ['gpt-5.5-pro', 2520000, 13800000],
  ['gpt-5.4', 120000, 875000],
  ['gpt-5.4-pro', 2520000, 13800000],
  ['gpt-5.4-mini', 36000, 142500],
  ['gpt-5.4-nano', 9800, 38500],
  ['gpt-5.2', 98000, 367500],
  ['gpt-5.1', 70000, 262500],
  ['gpt-5.1-codex', 70000, 262500],
  ['gpt-5.1-codex-max', 70000, 262500],
  ['gpt-5.1-codex-mini', 14000, 52500],
  ['gpt-5', 70000, 262500],
  ['gpt-5-codex', 70000, 262500],
  ['gpt-5-mini', 14000, 52500],
  ['gpt-5-nano', 2800, 10500],
  ['gpt-4.1', 92000, 430000],
  ['gpt-4.1-mini', 18400, 86000],
  ['gpt-4.1-nano', 4600, 21500],
  ['gpt-4o', 140000, 725000],
  ['gpt-4o-2024-05-13', 360000, 2150000],
  ['gpt-4o-mini', 8400, 43500],
  ['o3', 92000, 430000],
  ['o4-mini', 50600, 236500],
  ['o3-mini', 61600, 319000],
  ['o1', 840000, 4350000],
  ['text-embedding-3-small', 1200, 8000],
  ['text-embedding-3-large', 7800, 52000],
  ['text-embedding-ada-002', 6000, 40000],
];

t.test('every model in the table costs what the vendor\'s page says, cache reads and writes included', async (t) => {
  t.same(PRICE_TABLE.map((e) => e.model).sort(), EXPECTED.map(([m]) => m).sort(), 'a hand-computed figure for every entry, no more');
  for (const [model, short, long] of EXPECTED) {
    const entry = PRICE_TABLE.find((e) => e.model === model)!;
    t.equal(costMicros(SHORT, entry.rates), short, `${model}: a 60K-token prompt`);
    t.equal(costMicros(LONG, entry.rates), long, `${model}: a 400K-token prompt`);
  }
});

t.test('every entry names its source page and the date it was read', async (t) => {
  for (const entry of PRICE_TABLE) {
    t.match(entry.source, /^https:\/\/(platform\.claude\.com|developers\.openai\.com)\//, `${entry.model}: source`);
    t.match(entry.readOn, /^\d{4}-\d{2}-\d{2}$/, `${entry.model}: date read`);
    t.ok(Date.parse(entry.readOn) <= Date.now(), `${entry.model}: read in the past`);
  }
});

t.test('a long-context tier starts past its threshold, not at it', async (t) => {
  const sonnet = PRICE_TABLE.find((e) => e.model === 'claude-sonnet-4-5')!;
  const at = { ...SHORT, input_tokens: 200_000, cache_read_tokens: 0, cache_write_tokens: 0, cache_write_1h_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
  t.equal(costMicros(at, sonnet.rates), 600_000, '200,000 tokens at $3');
  t.equal(costMicros({ ...at, input_tokens: 200_001 }, sonnet.rates), 1_200_006, '200,001 tokens at $6');
});

t.test('dated snapshots, aliases and cloud resellers\' names resolve to the table', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-0', 'claude-sonnet-4'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-3-5-haiku-latest', 'claude-3-5-haiku'],
    ['Claude-Opus-4-6', 'claude-opus-4-6'],
    ['claude-sonnet-4-5[1m]', 'claude-sonnet-4-5'],
    ['anthropic.claude-haiku-4-5-20251001-v1:0', 'claude-haiku-4-5'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['global.anthropic.claude-opus-4-6-v1', 'claude-opus-4-6'],
    ['arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0', 'claude-3-5-haiku'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['publishers/anthropic/models/claude-sonnet-4@20250514', 'claude-sonnet-4'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-2024-05-13', 'gpt-4o-2024-05-13'],
    ['gpt-5.4-mini-2026-03-17', 'gpt-5.4-mini'],
    ['gpt-5.1-codex', 'gpt-5.1-codex'],
    ['openai/gpt-5', 'gpt-5'],
    ['gpt-5.4-turbo', null],
    ['llama-3.1-70b', null],
    ['my-azure-deployment', null],
  ];
  for (const [name, model] of cases) t.equal(tableEntryFor(name)?.model ?? null, model, name);
});

t.test('a reasoning rate prices reasoning tokens apart from the rest of the output', async (t) => {
  const usage: Usage = { input_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, output_tokens: 1_000, reasoning_tokens: 400 };
  t.equal(costMicros(usage, { inputPerMillion: 1, outputPerMillion: 10, reasoningPerMillion: 3 }), 600 * 10 + 400 * 3);
  t.equal(costMicros(usage, { inputPerMillion: 1, outputPerMillion: 10 }), 10_000, 'without one, reasoning is output');
});

t.test('Anthropic usage keeps the 1-hour part of its cache writes', async (t) => {
  const usage = usageFromMessages({
    input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, output_tokens: 5,
    cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 },
  });
  t.same(usage, { input_tokens: 160, output_tokens: 5, cache_read_tokens: 100, cache_write_tokens: 50, cache_write_1h_tokens: 30, reasoning_tokens: 0 });
  const noSplit = usageFromMessages({ input_tokens: 10, cache_creation_input_tokens: 50, output_tokens: 5 });
  t.notOk(noSplit && 'cache_write_1h_tokens' in noSplit, 'absent when the upstream does not split its writes');
});
