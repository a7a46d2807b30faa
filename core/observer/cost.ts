// The cost of one request from a pricing and the canonical usage.
//
// Canonical usage counts every prompt token in input_tokens, cache reads included
// (cache_read_tokens is a subset). Cache reads are priced at cachedInputPerMillion when the
// pricing sets it, else at the input rate; cache writes are priced as input. Reasoning tokens are
// part of output_tokens, so they are not priced again. A cost is a whole number of micro-units
// (0.000001), rounded per request.
import type { Usage } from '../canonical/types.ts';
import type { Pricing, PricingSpec } from '../catalog/kinds.ts';
import { fromMicros } from './money.ts';

export interface Cost {
  cost: number;
  currency: string;
}

export function costOf(usage: Usage, pricing: Pick<PricingSpec, 'inputPerMillion' | 'outputPerMillion' | 'cachedInputPerMillion'>): number {
  const cached = Math.min(usage.cache_read_tokens, usage.input_tokens);
  const uncached = usage.input_tokens - cached;
  const cachedRate = pricing.cachedInputPerMillion ?? pricing.inputPerMillion;
  // A price per million tokens times tokens is the cost in micro-units; kept whole (money.ts).
  const micros = uncached * pricing.inputPerMillion + cached * cachedRate + usage.output_tokens * pricing.outputPerMillion;
  return fromMicros(Math.round(micros));
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
