// Costs where requests are priced in more than one currency: a window's total cost adds amounts
// that do not add (USD and EUR), so the usage API gives the cost per currency beside it, and a
// timeseries' cost in one currency when asked (as a budget reads its own).
import { addMoney } from './money.ts';
import type { CurrencyCost, Summary, SummaryQuery, TimeseriesPoint, TimeseriesQuery, UsageFilter, UsageTotals } from './types.ts';

export type { CurrencyCost };

/** GET /api/usage/summary's totals: a summary and its cost per currency, each group's too when the window has several. */
export interface SummaryWithCosts extends Omit<Summary, 'groups'> {
  groups?: Array<{ key: string | null; totals: UsageTotals; costs?: CurrencyCost[] }>;
  costs: CurrencyCost[];
}

/** A backend's cost per currency over `filter`, costliest first; null when the backend cannot group by currency. */
export async function costsByCurrency(summary: (query: SummaryQuery) => Promise<Summary>, filter: UsageFilter): Promise<CurrencyCost[] | null> {
  const byCurrency = await summary({ ...filter, groupBy: 'currency' });
  if (!byCurrency.groups) return null;
  return mergeCosts([byCurrency.groups.flatMap((g) => (g.key === null ? [] : [{ currency: g.key, cost: g.totals.cost }]))]);
}

/**
 * A grouped summary's cost per currency in each group (keyed by the group's key), one read per
 * currency: for a window priced in several, where a group's totals.cost adds amounts that do not add.
 */
export async function groupCostsByCurrency(summary: (query: SummaryQuery) => Promise<Summary>, query: SummaryQuery, currencies: string[]): Promise<Map<string | null, CurrencyCost[]>> {
  const reads = await Promise.all(currencies.map(async (currency) => ({ currency, summary: await summary({ ...query, currency }) })));
  const byGroup = new Map<string | null, CurrencyCost[]>();
  for (const { currency, summary: read } of reads) {
    for (const group of read.groups ?? []) {
      const costs = byGroup.get(group.key) ?? [];
      costs.push({ currency, cost: group.totals.cost });
      byGroup.set(group.key, costs);
    }
  }
  return byGroup;
}

/** The group costs of several backends, added per group and currency, each group's costliest first. */
export function mergeGroupCosts(reads: Array<Map<string | null, CurrencyCost[]>>): Map<string | null, CurrencyCost[]> {
  const keys = new Set(reads.flatMap((read) => [...read.keys()]));
  return new Map([...keys].map((key) => [key, mergeCosts(reads.map((read) => read.get(key) ?? []))]));
}

/** The costs of several backends, added per currency, costliest first (ties by code). */
export function mergeCosts(lists: CurrencyCost[][]): CurrencyCost[] {
  const sums = new Map<string, number>();
  for (const { currency, cost } of lists.flat()) sums.set(currency, addMoney(sums.get(currency) ?? 0, cost));
  return [...sums].map(([currency, cost]) => ({ currency, cost })).sort((a, b) => b.cost - a.cost || (a.currency < b.currency ? -1 : 1));
}

/**
 * A backend's timeseries with each point's totals over every currency and its cost that of the
 * events priced in `currency` only. Two reads, one filtered by currency for the cost.
 */
export async function timeseriesInCurrency(timeseries: (query: TimeseriesQuery) => Promise<TimeseriesPoint[]>, query: TimeseriesQuery, currency: string): Promise<TimeseriesPoint[]> {
  const [all, priced] = await Promise.all([timeseries(query), timeseries({ ...query, currency })]);
  const id = (p: TimeseriesPoint) => `${p.t}\u0000${p.key === undefined ? '' : `${p.key === null ? 0 : 1}${p.key}`}`;
  const costAt = new Map(priced.map((p) => [id(p), p.totals.cost]));
  const points = all.map((p) => ({ ...p, totals: { ...p.totals, cost: costAt.get(id(p)) ?? 0 } }));
  // A point priced in the currency but absent from the other read (an event written between the two).
  const seen = new Set(all.map(id));
  for (const p of priced) if (!seen.has(id(p))) points.push(p);
  return points;
}
