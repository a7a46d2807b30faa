// Whether a budget that caps money can count a model's requests: a request Relay cannot price in
// the budget's currency adds nothing to its spend. Known before the request is sent only from the
// catalog: a pricing for the model, else the shipped table by each binding's upstream model (a
// request may fail over to any enabled binding, so each one must be priced). A request that keeps a
// premium mode (priority processing, fast mode) needs that mode's figure too: without it the
// answer would be counted at the standard rates.
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import { priceFor } from '../pricing/price-lookup.ts';

/** A binding whose requests a budget in `currency` could not count. */
export interface UnpricedBinding {
  hostSlug: string;
  upstreamModel: string;
  /** The price's currency when the binding is priced in another; null when it has no price. */
  pricedIn: string | null;
  /** Priced in the currency, but without a figure for the premium mode the request asks for. */
  modifier?: string;
}

/**
 * The first enabled binding of the model that Relay cannot price in `currency` (with a figure for
 * `modifier`, the premium mode the request asks for, when it asks for one); null when every one is priced.
 */
export function unpricedBinding(snapshot: CatalogSnapshot, modelId: string, currency: string, modifier?: string): UnpricedBinding | null {
  const model = snapshot.models.get(modelId);
  if (!model) return null;
  for (const binding of model.spec.bindings) {
    if (!binding.enabled) continue;
    const price = priceFor(snapshot, modelId, binding.hostId, binding.upstreamModel);
    const hostSlug = snapshot.hosts.get(binding.hostId)?.metadata.slug ?? binding.hostId;
    if (price?.currency !== currency) return { hostSlug, upstreamModel: binding.upstreamModel, pricedIn: price?.currency ?? null };
    if (modifier !== undefined && !(price.modifiers && Object.hasOwn(price.modifiers, modifier))) return { hostSlug, upstreamModel: binding.upstreamModel, pricedIn: currency, modifier };
  }
  return null;
}
