// The price table Relay ships: list prices in USD per million tokens for the models of the vendors
// Relay reaches, each with the page it was read from and when. A `pricings` entity overrides an
// entry (core/pricing/price-lookup.ts); `relay prices` prints the table.
//
// Cloud resellers (Bedrock, Vertex AI, Azure) sell these models under their own names; those names
// resolve to the entries here (core/pricing/model-names.ts) at the vendor's list price. Their
// surcharges (regional endpoints, data residency) are not in the table: price such a host with a
// `pricings` entity naming it.
import type { PriceRates } from './rates.ts';

export interface TableEntry {
  /** The model's name at its vendor, without a date: dated snapshots resolve to it. */
  model: string;
  vendor: 'openai' | 'anthropic';
  /** Other names the vendor gives the same model at the same price. */
  aliases?: readonly string[];
  rates: PriceRates;
  /**
   * What an answer's Usage.price_modifiers multiply its token cost by (Anthropic's `fast` and
   * `us_inference`, OpenAI's `priority` and `flex` service tiers); they apply to a `pricings`
   * entity's rates for the model too.
   */
  modifiers?: Readonly<Record<string, number>>;
  /** The page the rates were read from. */
  source: string;
  /** The date they were read, YYYY-MM-DD. */
  readOn: string;
}

export const TABLE_CURRENCY = 'USD';

const ANTHROPIC_SOURCE = 'https://platform.claude.com/docs/en/about-claude/pricing';
/**
 * Fast mode (Opus 4.6 to 4.8, and Opus 5 at twice its rates, read from resellers' pages that agree;
 * Opus 5.5's and Fable 5.2's price is not in the table) and US-only inference (Claude 4.6 and
 * later), read from these pages on READ_ON.
 */
export const ANTHROPIC_MODIFIER_SOURCES = [
  'https://platform.claude.com/docs/en/build-with-claude/fast-mode',
  'https://platform.claude.com/docs/en/build-with-claude/data-residency',
];
/** US-only inference (`inference_geo: "us"`) costs 1.1 times every token rate on Claude 4.6 and later. */
const US_INFERENCE = 1.1;
/** Anthropic's web search tool: $10 per 1,000 searches on every model, read from its page on READ_ON. */
const ANTHROPIC_WEB_SEARCH_PER_THOUSAND = 10;
export const ANTHROPIC_WEB_SEARCH_SOURCE = 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool';
const OPENAI_SOURCE = 'https://developers.openai.com/api/docs/pricing';
/** Priority processing's rates (per model) and flex processing's (the Batch rates), read from these pages on READ_ON. */
export const OPENAI_TIER_SOURCES = [
  'https://openai.com/api-priority-processing/',
  'https://developers.openai.com/api/docs/guides/flex-processing',
];
/** Flex processing is billed at the Batch API's rates: half the standard ones, on every model that offers it. */
const FLEX = 0.5;
/**
 * OpenAI's reasoning models (GPT-5 and later, the o-series) bill a web search call at $10 per 1,000
 * with either tool version; gpt-4o and gpt-4.1 at $10 or $25 by the tool's version, which the
 * answer does not say, so theirs stay unpriced. Search content tokens are in the usage's input.
 */
const OPENAI_REASONING_SEARCH_PER_THOUSAND = 10;
const OPENAI_REASONING_MODEL = /^(?:gpt-[5-9]|o\d)/;
const READ_ON = '2026-11-26';

interface AnthropicRates { input: number; write5m: number; write1h: number; read: number; output: number }

const claudeRates = (r: AnthropicRates): PriceRates => ({
  inputPerMillion: r.input, outputPerMillion: r.output, cachedInputPerMillion: r.read,
  cacheWritePerMillion: r.write5m, cacheWrite1hPerMillion: r.write1h,
});

interface ClaudeExtra {
  aliases?: string[];
  longContext?: { above: number } & AnthropicRates;
  /** Claude 4.6 and later: US-only inference is priced apart. */
  usInference?: boolean;
  /** Fast mode's multiple of the model's rates, on models that have it. */
  fast?: number;
}

function claude(model: string, r: AnthropicRates, extra: ClaudeExtra = {}): TableEntry {
  const rates: PriceRates = { ...claudeRates(r), webSearchPerThousand: ANTHROPIC_WEB_SEARCH_PER_THOUSAND };
  if (extra.longContext) rates.longContext = { aboveInputTokens: extra.longContext.above, ...claudeRates(extra.longContext) };
  const modifiers = { ...(extra.usInference ? { us_inference: US_INFERENCE } : {}), ...(extra.fast ? { fast: extra.fast } : {}) };
  return {
    model, vendor: 'anthropic', ...(extra.aliases ? { aliases: extra.aliases } : {}), rates,
    ...(Object.keys(modifiers).length > 0 ? { modifiers } : {}), source: ANTHROPIC_SOURCE, readOn: READ_ON,
  };
}

const LATER = { usInference: true };

interface OpenAIRates { input: number; cached?: number; output: number }

const gptRates = (r: OpenAIRates): PriceRates => ({
  inputPerMillion: r.input, outputPerMillion: r.output, ...(r.cached === undefined ? {} : { cachedInputPerMillion: r.cached }),
});

interface GptExtra {
  longContext?: { above: number } & OpenAIRates;
  /** Priority processing's rates as a multiple of the standard ones (the same for every rate of a model), on models that have it. */
  priority?: number;
}

function gpt(model: string, r: OpenAIRates, extra: GptExtra = {}): TableEntry {
  const rates = gptRates(r);
  if (OPENAI_REASONING_MODEL.test(model)) rates.webSearchPerThousand = OPENAI_REASONING_SEARCH_PER_THOUSAND;
  if (extra.longContext) rates.longContext = { aboveInputTokens: extra.longContext.above, ...gptRates(extra.longContext) };
  const modifiers = { flex: FLEX, ...(extra.priority ? { priority: extra.priority } : {}) };
  return { model, vendor: 'openai', rates, modifiers, source: OPENAI_SOURCE, readOn: READ_ON };
}

const OPUS_45 = { input: 5, write5m: 6.25, write1h: 10, read: 0.5, output: 25 };
const OPUS_4 = { input: 15, write5m: 18.75, write1h: 30, read: 1.5, output: 75 };
const SONNET_4 = { input: 3, write5m: 3.75, write1h: 6, read: 0.3, output: 15 };
/** Sonnet 4 and 4.5 above 200K prompt tokens; Claude 4.6 and later have no long-context surcharge. */
const SONNET_4_LONG = { above: 200_000, input: 6, write5m: 7.5, write1h: 12, read: 0.6, output: 22.5 };
const FABLE_5 = { input: 10, write5m: 12.5, write1h: 20, output: 50 };
const GPT_5 = { input: 1.25, cached: 0.125, output: 10 };
const GPT_5_MINI = { input: 0.25, cached: 0.025, output: 2 };
/** GPT-5, GPT-5.1 and their Codex models on priority processing: $2.50 in, $0.25 cached, $20 out. */
const GPT_5_PRIORITY = { priority: 2 };
/** Above 272K prompt tokens GPT-5.4 and GPT-5.5 cost twice the input rates and 1.5 times the output rate. */
const GPT_LONG_ABOVE = 272_000;

export const PRICE_TABLE: readonly TableEntry[] = [
  claude('claude-fable-5-1', { ...FABLE_5, read: 0.25 }, LATER),
  claude('claude-mythos-5-1', { ...FABLE_5, read: 0.25 }, LATER),
  claude('claude-fable-5', { ...FABLE_5, read: 1 }, LATER),
  claude('claude-mythos-5', { ...FABLE_5, read: 1 }, LATER),
  claude('claude-opus-5-5', { input: 4, write5m: 5, write1h: 8, read: 0.2, output: 20 }, LATER),
  claude('claude-opus-5', OPUS_45, { ...LATER, fast: 2 }),
  claude('claude-opus-4-8', OPUS_45, { ...LATER, fast: 2 }),
  claude('claude-opus-4-7', OPUS_45, { ...LATER, fast: 6 }),
  claude('claude-opus-4-6', OPUS_45, { ...LATER, fast: 6 }),
  claude('claude-opus-4-5', OPUS_45),
  claude('claude-opus-4-1', OPUS_4),
  claude('claude-opus-4', OPUS_4, { aliases: ['claude-opus-4-0'] }),
  claude('claude-3-opus', OPUS_4),
  claude('claude-sonnet-5-5', { input: 2, write5m: 2.5, write1h: 4, read: 0.1, output: 10 }, LATER),
  claude('claude-sonnet-5', { input: 2, write5m: 2.5, write1h: 4, read: 0.2, output: 10 }, LATER),
  claude('claude-sonnet-4-6', SONNET_4, LATER),
  claude('claude-sonnet-4-5', SONNET_4, { longContext: SONNET_4_LONG }),
  claude('claude-sonnet-4', SONNET_4, { aliases: ['claude-sonnet-4-0'], longContext: SONNET_4_LONG }),
  claude('claude-3-7-sonnet', SONNET_4, { aliases: ['claude-sonnet-3-7'] }),
  claude('claude-haiku-5-5', { input: 0.1, write5m: 0.125, write1h: 0.2, read: 0.01, output: 0.5 }, {
    ...LATER,
    longContext: { above: 100_000, input: 0.5, write5m: 0.625, write1h: 1, read: 0.05, output: 2.5 },
  }),
  claude('claude-haiku-4-5', { input: 1, write5m: 1.25, write1h: 2, read: 0.1, output: 5 }),
  claude('claude-3-5-haiku', { input: 0.8, write5m: 1, write1h: 1.6, read: 0.08, output: 4 }),
  claude('claude-3-haiku', { input: 0.25, write5m: 0.3, write1h: 0.5, read: 0.03, output: 1.25 }),

  gpt('gpt-5.5', { input: 5, cached: 0.5, output: 30 }, { longContext: { above: GPT_LONG_ABOVE, input: 10, cached: 1, output: 45 }, priority: 2.5 }),
  gpt('gpt-5.5-pro', { input: 30, output: 180 }),
  gpt('gpt-5.4', { input: 2.5, cached: 0.25, output: 15 }, { longContext: { above: GPT_LONG_ABOVE, input: 5, cached: 0.5, output: 22.5 }, priority: 2 }),
  gpt('gpt-5.4-pro', { input: 30, output: 180 }),
  gpt('gpt-5.4-mini', { input: 0.75, cached: 0.075, output: 4.5 }, { priority: 2 }),
  gpt('gpt-5.4-nano', { input: 0.2, cached: 0.02, output: 1.25 }),
  gpt('gpt-5.2', { input: 1.75, cached: 0.175, output: 14 }, { priority: 2 }),
  gpt('gpt-5.1', GPT_5, GPT_5_PRIORITY),
  gpt('gpt-5.1-codex', GPT_5, GPT_5_PRIORITY),
  gpt('gpt-5.1-codex-max', GPT_5),
  gpt('gpt-5.1-codex-mini', GPT_5_MINI),
  gpt('gpt-5', GPT_5, GPT_5_PRIORITY),
  gpt('gpt-5-codex', GPT_5, GPT_5_PRIORITY),
  gpt('gpt-5-mini', GPT_5_MINI, { priority: 1.8 }),
  gpt('gpt-5-nano', { input: 0.05, cached: 0.005, output: 0.4 }),
  gpt('gpt-4.1', { input: 2, cached: 0.5, output: 8 }, { priority: 1.75 }),
  gpt('gpt-4.1-mini', { input: 0.4, cached: 0.1, output: 1.6 }, { priority: 1.75 }),
  gpt('gpt-4.1-nano', { input: 0.1, cached: 0.025, output: 0.4 }, { priority: 2 }),
  gpt('gpt-4o', { input: 2.5, cached: 1.25, output: 10 }, { priority: 1.7 }),
  // The first gpt-4o snapshot kept its launch price: an exact name wins over the dated-snapshot rule.
  gpt('gpt-4o-2024-05-13', { input: 5, output: 15 }, { priority: 1.75 }),
  gpt('gpt-4o-mini', { input: 0.15, cached: 0.075, output: 0.6 }, { priority: 5 / 3 }),
  gpt('o3', { input: 2, cached: 0.5, output: 8 }, { priority: 1.75 }),
  gpt('o4-mini', { input: 1.1, cached: 0.275, output: 4.4 }, { priority: 20 / 11 }),
  gpt('o3-mini', { input: 1.1, cached: 0.55, output: 4.4 }),
  gpt('o1', { input: 15, cached: 7.5, output: 60 }),
  gpt('text-embedding-3-small', { input: 0.02, output: 0 }),
  gpt('text-embedding-3-large', { input: 0.13, output: 0 }),
  gpt('text-embedding-ada-002', { input: 0.1, output: 0 }),
];
