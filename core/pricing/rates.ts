// The rates of one price, per million tokens: shared by `pricings` entities and the shipped
// table (core/pricing/table.ts), so an operator's pricing can say everything the table says.
import { Type, type Static } from '@sinclair/typebox';

const PerMillion = (description: string) => Type.Number({ minimum: 0, maximum: 1_000_000, description });

export const RateFields = {
  inputPerMillion: PerMillion('Uncached prompt tokens.'),
  outputPerMillion: PerMillion('Output tokens (reasoning included unless reasoningPerMillion is set).'),
  cachedInputPerMillion: Type.Optional(PerMillion('Prompt tokens read from the prompt cache. Default: inputPerMillion.')),
  cacheWritePerMillion: Type.Optional(PerMillion("Prompt tokens written to the prompt cache (Anthropic's 5-minute write). Default: inputPerMillion.")),
  cacheWrite1hPerMillion: Type.Optional(PerMillion("Prompt tokens written to the 1-hour prompt cache (Anthropic). Default: cacheWritePerMillion.")),
  reasoningPerMillion: Type.Optional(PerMillion('Reasoning tokens, where a vendor prices them apart from output. Default: outputPerMillion.')),
};

export const LongContextRates = Type.Object({
  aboveInputTokens: Type.Integer({ minimum: 1, description: 'These rates apply, to every token of the request, when its prompt (cache reads and writes included) is longer than this.' }),
  ...RateFields,
}, { additionalProperties: false, description: 'The long-context tier: the price of a request whose prompt is longer than aboveInputTokens.' });

export type LongContextRates = Static<typeof LongContextRates>;

/** Searches are priced per request, the same in every long-context tier: a pricing's own field. */
export const WebSearchRate = {
  webSearchPerThousand: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Server-side web searches (Anthropic web_search, OpenAI web_search calls), per 1,000. Without it searches are not priced, and the usage event says so (extras.web_search_unpriced).' })),
};

/**
 * A pricing's own multiples for the conditions an answer reports it was priced under (Anthropic's
 * `fast`, `us_inference`; OpenAI's `priority`, `flex`): each replaces the table's figure of that
 * name for the model, which a host the table does not know (an Azure deployment) has none of.
 */
export const PriceModifierFields = {
  modifiers: Type.Optional(Type.Record(
    Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }),
    Type.Number({ minimum: 0, maximum: 1000 }),
    {
      maxProperties: 16,
      additionalProperties: false,
      description: "Multiples of the tokens' cost for an answer the vendor says ran under a condition: fast, us_inference (Anthropic), priority, flex, scale (OpenAI's service tiers), e.g. {\"priority\": 2}. Each replaces the shipped table's figure of that name; without one (here or in the table) such an answer is priced at these rates and the usage event says so (extras.price_modifiers_unpriced).",
    },
  )),
};

export interface PriceRates {
  inputPerMillion: number;
  outputPerMillion: number;
  cachedInputPerMillion?: number;
  cacheWritePerMillion?: number;
  cacheWrite1hPerMillion?: number;
  reasoningPerMillion?: number;
  webSearchPerThousand?: number;
  longContext?: LongContextRates;
}
