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
