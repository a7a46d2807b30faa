// Agent sessions from usage events: the in-memory answer (log-file, log-valkey, and the reference
// the backend conformance suite holds every backend to), and the merge of several backends'.
import type { UsageEvent } from '../hooks.ts';
import { addTotals } from './merge-reads.ts';
import { sessionIdOf } from './session-id.ts';
import type { SessionSummary, SessionsQuery } from './types.ts';
import { addToTotals, emptyTotals, matchesFilter } from './usage-query.ts';

/** cache reads over prompt tokens, rounded to 4 places; null without prompt tokens. */
export function cacheHitRatio(cacheRead: number, input: number): number | null {
  return input > 0 ? Math.round((cacheRead / input) * 10_000) / 10_000 : null;
}

/** Whether the sessions' costs compare: all priced in one currency (or none). */
function inOneCurrency(sessions: ReadonlyArray<Pick<SessionSummary, 'currencies'>>): boolean {
  return new Set(sessions.flatMap((s) => s.currencies)).size <= 1;
}

const tokensOf = (s: SessionSummary): number => s.totals.input_tokens + s.totals.output_tokens;

/**
 * The costliest first (or the last active first), ties by last activity then id, cut to the limit.
 * Costs in different currencies do not compare: a list priced in more than one is ordered by
 * tokens (input and output) instead, as the whole list, so that the order stays one order.
 */
export function sortSessions(sessions: SessionSummary[], query: Pick<SessionsQuery, 'sort' | 'limit'>): SessionSummary[] {
  const byRecent = (a: SessionSummary, b: SessionSummary) => b.last_finished_at.localeCompare(a.last_finished_at);
  const spent = query.sort === 'recent' ? () => 0
    : inOneCurrency(sessions) ? (a: SessionSummary, b: SessionSummary) => b.totals.cost - a.totals.cost
    : (a: SessionSummary, b: SessionSummary) => tokensOf(b) - tokensOf(a);
  sessions.sort((a, b) => spent(a, b) || byRecent(a, b) || a.session_id.localeCompare(b.session_id));
  return sessions.slice(0, query.limit);
}

interface Building {
  client: string | null;
  firstMs: number;
  lastMs: number;
  models: Set<string>;
  currencies: Set<string>;
  summary: SessionSummary;
}

function finish(b: Building): SessionSummary {
  const s = b.summary;
  s.client = b.client;
  s.first_started_at = new Date(b.firstMs).toISOString();
  s.last_finished_at = new Date(b.lastMs).toISOString();
  s.duration_ms = b.lastMs - b.firstMs;
  s.turns = s.totals.requests;
  s.models = [...b.models].sort();
  s.currencies = [...b.currencies].sort();
  s.cache_hit_ratio = cacheHitRatio(s.totals.cache_read_tokens, s.totals.input_tokens);
  return s;
}

/** Accumulates sessions one event at a time (for backends that stream their reads). */
export class SessionsBuilder {
  private readonly sessions = new Map<string, Building>();

  constructor(private readonly query: SessionsQuery) {}

  add(event: UsageEvent): void {
    const id = sessionIdOf(event);
    if (id === null || !matchesFilter(event, this.query)) return;
    const started = Date.parse(event.started_at);
    const finished = Date.parse(event.finished_at);
    let b = this.sessions.get(id);
    if (!b) {
      b = {
        client: null, firstMs: started, lastMs: finished, models: new Set(), currencies: new Set(),
        summary: { session_id: id, client: null, first_started_at: '', last_finished_at: '', duration_ms: 0, turns: 0, models: [], currencies: [], totals: emptyTotals(), cache_hit_ratio: null },
      };
      this.sessions.set(id, b);
    }
    b.client ??= event.client;
    b.firstMs = Math.min(b.firstMs, started);
    b.lastMs = Math.max(b.lastMs, finished);
    const model = event.model_slug ?? event.model_requested;
    if (model !== null) b.models.add(model);
    if (event.currency !== null) b.currencies.add(event.currency);
    addToTotals(b.summary.totals, event);
  }

  result(): SessionSummary[] {
    return sortSessions([...this.sessions.values()].map(finish), this.query);
  }
}

export function sessionsOfEvents(events: Iterable<UsageEvent>, query: SessionsQuery): SessionSummary[] {
  const builder = new SessionsBuilder(query);
  for (const event of events) builder.add(event);
  return builder.result();
}

/** One list from several backends' lists: a session in more than one (written across a switch) is added up. */
export function mergeSessions(lists: SessionSummary[][], query: Pick<SessionsQuery, 'sort' | 'limit'>): SessionSummary[] {
  if (lists.length === 1) return lists[0]!;
  const byId = new Map<string, SessionSummary>();
  for (const s of lists.flat()) {
    const into = byId.get(s.session_id);
    if (!into) {
      byId.set(s.session_id, { ...s, models: [...s.models], currencies: [...s.currencies], totals: { ...s.totals } });
      continue;
    }
    into.client ??= s.client;
    if (s.first_started_at < into.first_started_at) into.first_started_at = s.first_started_at;
    if (s.last_finished_at > into.last_finished_at) into.last_finished_at = s.last_finished_at;
    into.duration_ms = Date.parse(into.last_finished_at) - Date.parse(into.first_started_at);
    into.models = [...new Set([...into.models, ...s.models])].sort();
    into.currencies = [...new Set([...into.currencies, ...s.currencies])].sort();
    addTotals(into.totals, s.totals);
    into.turns = into.totals.requests;
    into.cache_hit_ratio = cacheHitRatio(into.totals.cache_read_tokens, into.totals.input_tokens);
  }
  return sortSessions([...byId.values()], query);
}
