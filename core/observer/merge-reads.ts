// Combines the answers of several usage backends to one read (the backend selected now and those
// that hold what was written before a switch). Every backend pages by the same keyset, so pages
// merge in order; totals add, cost as micro-units.
import type { UsageEvent } from '../hooks.ts';
import { compareNewestFirst, encodeCursor } from './cursor.ts';
import { addMoney } from './money.ts';
import { emptyTotals, sortPoints } from './usage-query.ts';
import type { ListPage, Summary, TimeseriesPoint, UsageTotals } from './types.ts';

export function addTotals(into: UsageTotals, from: UsageTotals): void {
  into.requests += from.requests;
  into.errors += from.errors;
  into.input_tokens += from.input_tokens;
  into.output_tokens += from.output_tokens;
  into.cache_read_tokens += from.cache_read_tokens;
  into.cache_write_tokens += from.cache_write_tokens;
  into.reasoning_tokens += from.reasoning_tokens;
  into.cost = addMoney(into.cost, from.cost);
}

/**
 * One page of `limit` from pages each asked for `limit` after the same cursor: any event a backend
 * held back is older than its page's last, so it is older than the merged page's last too.
 */
export function mergePages(pages: ListPage[], limit: number): ListPage {
  if (pages.length === 1) return pages[0]!;
  const all: UsageEvent[] = pages.flatMap((page) => page.items).sort(compareNewestFirst);
  const items = all.slice(0, limit);
  const more = all.length > limit || pages.some((page) => page.nextCursor !== null);
  const last = items.at(-1);
  return { items, nextCursor: more && last ? encodeCursor(last) : null };
}

export function mergeSummaries(summaries: Summary[]): Summary {
  if (summaries.length === 1) return summaries[0]!;
  const totals = emptyTotals();
  const groups = new Map<string | null, UsageTotals>();
  let grouped = false;
  for (const summary of summaries) {
    addTotals(totals, summary.totals);
    if (!summary.groups) continue;
    grouped = true;
    for (const group of summary.groups) {
      let into = groups.get(group.key);
      if (!into) groups.set(group.key, (into = emptyTotals()));
      addTotals(into, group.totals);
    }
  }
  if (!grouped) return { totals };
  const list = [...groups].map(([key, t]) => ({ key, totals: t }));
  list.sort((a, b) => b.totals.requests - a.totals.requests || String(a.key).localeCompare(String(b.key)));
  return { totals, groups: list };
}

export function mergeTimeseries(series: TimeseriesPoint[][]): TimeseriesPoint[] {
  if (series.length === 1) return series[0]!;
  const points = new Map<string, TimeseriesPoint>();
  for (const point of series.flat()) {
    const id = `${point.t}\u0000${point.key ?? ''}\u0000${point.key === null ? 0 : 1}`;
    const into = points.get(id);
    if (into) addTotals(into.totals, point.totals);
    else points.set(id, { ...point, totals: { ...point.totals } });
  }
  return sortPoints([...points.values()]);
}
