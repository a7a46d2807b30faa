// A request's cost as the logs show it: a request that used tokens but has no cost was not free,
// its model has no price (no pricing entity, not in the shipped table), so it says "unpriced".
import { formatCost } from '../format.ts';

export const UNPRICED = 'unpriced';
export const UNPRICED_HINT = 'No price for this model: add a pricing for it (Catalog → Pricings); `relay prices` lists the shipped table.';

interface Costed {
  cost: number | null;
  currency: string | null;
  input_tokens: number;
  output_tokens: number;
}

export function isUnpriced(e: Costed): boolean {
  return e.cost === null && e.input_tokens + e.output_tokens > 0;
}

export function costText(e: Costed): string {
  return isUnpriced(e) ? UNPRICED : formatCost(e.cost, e.currency ?? 'USD');
}

/**
 * A usage total's cost (a window, a model, a relay key): tokens with a cost of 0 are unpriced, as
 * in the logs (the totals add only priced requests' costs, so a model without a price sums to 0).
 */
export function totalCostText(totals: { cost: number; input_tokens: number; output_tokens: number }, currency = 'USD'): string {
  return totals.cost === 0 && totals.input_tokens + totals.output_tokens > 0 ? UNPRICED : formatCost(totals.cost, currency);
}

/** A window's cost: in its currency, or each currency's amount when requests were priced in several (they do not add). */
export function windowCostText(totals: { cost: number; input_tokens: number; output_tokens: number }, costs: Array<{ currency: string; cost: number }>): string {
  if (costs.length > 1) return costs.map((c) => formatCost(c.cost, c.currency)).join(' · ');
  return totalCostText(totals, costs[0]?.currency);
}
