// The cost of one request from its price's rates and the canonical usage the upstream reported.
//
// Canonical usage counts every prompt token in input_tokens, cache reads and writes included
// (cache_read_tokens and cache_write_tokens are parts of it; cache_write_1h_tokens is the part of
// the writes made for an hour). Each part is priced at its own rate, falling back to the input
// rate when the price sets none. Reasoning tokens are part of output_tokens: priced again only
// when the price sets a reasoning rate of their own. A prompt longer than the long-context tier's
// threshold prices every token of the request at that tier. Server-side web searches are priced
// per search when the price sets a rate for them. `tokenFactor` multiplies the tokens' part (fast
// mode, US-only inference: see price-modifiers.ts), never the searches'. A cost is a whole number of micro-units
// (0.000001), rounded per request.
import type { Usage } from '../canonical/types.ts';
import type { Pricing } from '../catalog/kinds.ts';
import type { PriceRates } from '../pricing/rates.ts';
import { fromMicros } from './money.ts';

export interface Cost {
  cost: number;
  currency: string;
}

type TierRates = Omit<PriceRates, 'longContext'>;

/** The rates this request pays: the long-context tier's when its prompt is past the threshold. */
export function ratesForPrompt(rates: PriceRates, promptTokens: number): TierRates {
  const long = rates.longContext;
  return long && promptTokens > long.aboveInputTokens ? long : rates;
}

/** The cost in whole micro-units. */
export function costMicros(usage: Usage, price: PriceRates, tokenFactor = 1): number {
  const r = ratesForPrompt(price, usage.input_tokens);
  const cacheRead = Math.min(usage.cache_read_tokens, usage.input_tokens);
  const cacheWrite = Math.min(usage.cache_write_tokens, usage.input_tokens - cacheRead);
  const write1h = Math.min(usage.cache_write_1h_tokens ?? 0, cacheWrite);
  const uncached = usage.input_tokens - cacheRead - cacheWrite;
  const reasoning = r.reasoningPerMillion === undefined ? 0 : Math.min(usage.reasoning_tokens, usage.output_tokens);
  const write5mRate = r.cacheWritePerMillion ?? r.inputPerMillion;
  // A price per million tokens times tokens is the cost in micro-units.
  const tokens = uncached * r.inputPerMillion
    + cacheRead * (r.cachedInputPerMillion ?? r.inputPerMillion)
    + (cacheWrite - write1h) * write5mRate
    + write1h * (r.cacheWrite1hPerMillion ?? write5mRate)
    + (usage.output_tokens - reasoning) * r.outputPerMillion
    + reasoning * (r.reasoningPerMillion ?? r.outputPerMillion);
  // A price per 1,000 searches times searches, times 1,000, is micro-units.
  const searches = (usage.web_search_requests ?? 0) * (price.webSearchPerThousand ?? 0) * 1000;
  return Math.round(tokens * tokenFactor + searches);
}

/** The cost in the currency (whole micro-units, money.ts). */
export function costOf(usage: Usage, price: PriceRates, tokenFactor = 1): number {
  return fromMicros(costMicros(usage, price, tokenFactor));
}

/** The pricing for a model on a host: one naming the host wins over one for the model alone. */
export function findPricing(pricings: Iterable<Pricing>, modelId: string, hostId: string | null): Pricing | null {
  let modelWide: Pricing | null = null;
  for (const pricing of pricings) {
    if (pricing.spec.modelId !== modelId) continue;
    if (pricing.spec.hostId === undefined) modelWide ??= pricing;
    else if (hostId !== null && pricing.spec.hostId === hostId) return pricing;
  }
  return modelWide;
}

/** The cost and currency for a finished request, or null when no pricing applies. */
export function costFor(usage: Usage, pricings: Iterable<Pricing>, modelId: string | null, hostId: string | null): Cost | null {
  if (modelId === null) return null;
  const pricing = findPricing(pricings, modelId, hostId);
  if (!pricing) return null;
  return { cost: costOf(usage, pricing.spec), currency: pricing.spec.currency };
}
