// Which price a request pays, in order: a `pricings` entity for its model (one naming its host
// first), then the shipped table by the name of the model the answer says served it (a vendor's
// own fallback bills at that model's rates) or else by the upstream model's name, else none (the
// request is "unpriced", shown as such, never as free).
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import { baseModelName, exactName } from './model-names.ts';
import type { PriceRates } from './rates.ts';
import { PRICE_TABLE, TABLE_CURRENCY, type TableEntry } from './table.ts';

export interface Price {
  rates: PriceRates;
  currency: string;
  /** Where the price came from, recorded on the usage event: `pricing:<slug>` or `table:<model>`. */
  source: string;
  /** The multiples for the answer's price modifiers (fast mode, priority): the pricing's own, else the table's for the upstream model. */
  modifiers: Readonly<Record<string, number>> | null;
}

const byName = new Map<string, TableEntry>();
for (const entry of PRICE_TABLE) {
  for (const name of [entry.model, ...(entry.aliases ?? [])]) {
    if (byName.has(name)) throw new Error(`price table: ${name} is listed twice`);
    byName.set(name, entry);
  }
}

/** Upstream names seen, resolved once: the set is the catalog's bindings, capped in case it is not. */
const resolved = new Map<string, TableEntry | null>();
const MAX_RESOLVED = 4096;

/** The table entry for an upstream model name: the exact name first, then its base model's. */
export function tableEntryFor(upstreamModel: string): TableEntry | null {
  const known = resolved.get(upstreamModel);
  if (known !== undefined) return known;
  const entry = byName.get(exactName(upstreamModel)) ?? byName.get(baseModelName(upstreamModel)) ?? null;
  if (resolved.size >= MAX_RESOLVED) resolved.clear();
  resolved.set(upstreamModel, entry);
  return entry;
}

export function priceFor(
  snapshot: CatalogSnapshot, modelId: string, hostId: string | null, upstreamModel: string | null, answerModel: string | null = null,
): Price | null {
  const pricing = snapshot.pricingFor(modelId, hostId);
  const answered = answerModel === null ? null : tableEntryFor(answerModel);
  const entry = answered ?? (upstreamModel === null ? null : tableEntryFor(upstreamModel));
  const tabled = entry?.modifiers ?? null;
  if (pricing) {
    const own = pricing.spec.modifiers;
    const modifiers = own === undefined ? tabled : { ...tabled, ...own };
    return { rates: pricing.spec, currency: pricing.spec.currency, source: `pricing:${pricing.metadata.slug}`, modifiers };
  }
  if (entry) return { rates: entry.rates, currency: TABLE_CURRENCY, source: `table:${entry.model}`, modifiers: tabled };
  return null;
}
