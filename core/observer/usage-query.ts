// Answers the usage read queries over events held in memory. Backends without a query engine
// (log-file, log-valkey) share it, and the backend conformance suite holds every backend to it.
import type { UsageEvent } from '../hooks.ts';
import { addMoney } from './money.ts';
import { sessionIdOf } from './session-id.ts';
import { compareNewestFirst, decodeCursor, encodeCursor, isAfterCursor } from './cursor.ts';
import type {
  ListPage, ListQuery, StatusFilter, Summary, SummaryQuery, TimeseriesPoint, TimeseriesQuery, UsageFilter, UsageTotals,
} from './types.ts';

export function emptyTotals(): UsageTotals {
  return {
    requests: 0, errors: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0,
    reasoning_tokens: 0, cost: 0,
  };
}

export function addToTotals(totals: UsageTotals, event: UsageEvent): void {
  totals.requests += 1;
  if (event.status >= 400) totals.errors += 1;
  totals.input_tokens += event.input_tokens;
  totals.output_tokens += event.output_tokens;
  totals.cache_read_tokens += event.cache_read_tokens;
  totals.cache_write_tokens += event.cache_write_tokens;
  totals.reasoning_tokens += event.reasoning_tokens;
  if (event.cost !== null) totals.cost = addMoney(totals.cost, event.cost);
}

export function matchesStatus(status: number, filter: StatusFilter): boolean {
  switch (filter.op) {
    case 'eq': return status === filter.value;
    case 'gte': return status >= filter.value;
    case 'gt': return status > filter.value;
    case 'lte': return status <= filter.value;
    case 'lt': return status < filter.value;
  }
}

export function matchesFilter(event: UsageEvent, filter: UsageFilter): boolean {
  if (filter.policyId !== undefined && event.policy_id !== filter.policyId) return false;
  if (filter.relayKeyId !== undefined && event.relay_key_id !== filter.relayKeyId) return false;
  if (filter.modelId !== undefined && event.model_id !== filter.modelId) return false;
  if (filter.sessionId !== undefined && sessionIdOf(event) !== filter.sessionId) return false;
  if (filter.currency !== undefined && event.currency !== filter.currency) return false;
  if (filter.status && !filter.status.every((s) => matchesStatus(event.status, s))) return false;
  if (filter.from || filter.to) {
    const t = Date.parse(event.started_at);
    if (filter.from && t < filter.from.getTime()) return false;
    if (filter.to && t >= filter.to.getTime()) return false;
  }
  return true;
}

/** One page, newest first, from events in any order. */
export function pageOfEvents(events: Iterable<UsageEvent>, query: ListQuery): ListPage {
  const position = query.cursor ? decodeCursor(query.cursor) : null;
  const matching: UsageEvent[] = [];
  for (const event of events) {
    if (position && !isAfterCursor(event, position)) continue;
    if (matchesFilter(event, query)) matching.push(event);
  }
  matching.sort(compareNewestFirst);
  const items = matching.slice(0, query.limit);
  const last = items[items.length - 1];
  return { items, nextCursor: matching.length > query.limit && last ? encodeCursor(last) : null };
}

export function groupKey(event: UsageEvent, groupBy: NonNullable<SummaryQuery['groupBy']>): string | null {
  switch (groupBy) {
    case 'model': return event.model_id;
    case 'relay_key': return event.relay_key_id;
    case 'policy': return event.policy_id;
    case 'status': return String(event.status);
    case 'currency': return event.currency;
  }
}

/** Accumulates a summary one event at a time (for backends that stream their reads). */
export class SummaryBuilder {
  private readonly totals = emptyTotals();
  private readonly groups = new Map<string | null, UsageTotals>();

  constructor(private readonly query: SummaryQuery) {}

  add(event: UsageEvent): void {
    if (!matchesFilter(event, this.query)) return;
    addToTotals(this.totals, event);
    if (!this.query.groupBy) return;
    const key = groupKey(event, this.query.groupBy);
    let totals = this.groups.get(key);
    if (!totals) this.groups.set(key, (totals = emptyTotals()));
    addToTotals(totals, event);
  }

  result(): Summary {
    if (!this.query.groupBy) return { totals: this.totals };
    const groups = [...this.groups].map(([key, totals]) => ({ key, totals }));
    groups.sort((a, b) => b.totals.requests - a.totals.requests || String(a.key).localeCompare(String(b.key)));
    return { totals: this.totals, groups };
  }
}

export function bucketStartMs(startedAt: string, bucketSeconds: number): number {
  const size = bucketSeconds * 1000;
  return Math.floor(Date.parse(startedAt) / size) * size;
}

/** Accumulates a timeseries one event at a time; points come out in time order, then by key. */
export class TimeseriesBuilder {
  private readonly points = new Map<string, { t: number; key: string | null; totals: UsageTotals }>();

  constructor(private readonly query: TimeseriesQuery) {}

  add(event: UsageEvent): void {
    if (!matchesFilter(event, this.query)) return;
    const t = bucketStartMs(event.started_at, this.query.bucketSeconds);
    const key = this.query.groupBy ? groupKey(event, this.query.groupBy) : null;
    const id = `${t}\u0000${key ?? ''}\u0000${key === null ? 0 : 1}`;
    let point = this.points.get(id);
    if (!point) this.points.set(id, (point = { t, key, totals: emptyTotals() }));
    addToTotals(point.totals, event);
  }

  result(): TimeseriesPoint[] {
    return sortPoints([...this.points.values()].map((p) => ({
      t: new Date(p.t).toISOString(),
      ...(this.query.groupBy ? { key: p.key } : {}),
      totals: p.totals,
    })));
  }
}

export function sortPoints(points: TimeseriesPoint[]): TimeseriesPoint[] {
  return points.sort((a, b) => a.t.localeCompare(b.t) || String(a.key ?? '').localeCompare(String(b.key ?? '')));
}

export function summarizeEvents(events: Iterable<UsageEvent>, query: SummaryQuery): Summary {
  const builder = new SummaryBuilder(query);
  for (const event of events) builder.add(event);
  return builder.result();
}

export function timeseriesOfEvents(events: Iterable<UsageEvent>, query: TimeseriesQuery): TimeseriesPoint[] {
  const builder = new TimeseriesBuilder(query);
  for (const event of events) builder.add(event);
  return builder.result();
}
