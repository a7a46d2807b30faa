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
