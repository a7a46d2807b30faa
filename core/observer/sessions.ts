// Agent sessions from usage events: the in-memory answer (log-file, log-valkey, and the reference
// the backend conformance suite holds every backend to), and the merge of several backends'.
// A session is one relay key's: its id is client-chosen, so another key sending the same id makes
// another session rather than adding turns to this one.
import type { UsageEvent } from '../hooks.ts';
import { mergeCosts } from './costs-by-currency.ts';
import { addTotals } from './merge-reads.ts';
import { addMoney } from './money.ts';
import { sessionIdOf } from './session-id.ts';
import type { CurrencyCost, SessionSummary, SessionsQuery } from './types.ts';
import { addToTotals, emptyTotals, matchesFilter } from './usage-query.ts';

/** cache reads over prompt tokens, rounded to 4 places; null without prompt tokens. */
export function cacheHitRatio(cacheRead: number, input: number): number | null {
  return input > 0 ? Math.round((cacheRead / input) * 10_000) / 10_000 : null;
}

/** A session's cost in each currency, the costliest first (SessionSummary.costs); none when it was priced in fewer than two. */
export function costsPerCurrency(amounts: CurrencyCost[]): CurrencyCost[] | undefined {
  return amounts.length > 1 ? mergeCosts([amounts]) : undefined;
}

/** Whether the sessions' costs compare: all priced in one currency (or none). */
function inOneCurrency(sessions: ReadonlyArray<Pick<SessionSummary, 'currencies'>>): boolean {
  return new Set(sessions.flatMap((s) => s.currencies)).size <= 1;
}

const tokensOf = (s: SessionSummary): number => s.totals.input_tokens + s.totals.output_tokens;

/** What tells sessions apart: the relay key and the session id. */
const identityOf = (relayKeyId: string | null, sessionId: string): string => JSON.stringify([relayKeyId, sessionId]);

/** Relay key ids in order, no key last: SQL's ascending order, where NULL comes last. */
function byKey(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a.localeCompare(b);
}

/**
 * The costliest first (or the last active first), ties by last activity, then session id, then relay key id; cut to the limit.
 * Costs in different currencies do not compare: a list priced in more than one is ordered by
 * tokens (input and output) instead, as the whole list, so that the order stays one order.
 */
export function sortSessions(sessions: SessionSummary[], query: Pick<SessionsQuery, 'sort' | 'limit'>): SessionSummary[] {
  const byRecent = (a: SessionSummary, b: SessionSummary) => b.last_finished_at.localeCompare(a.last_finished_at);
  const spent = query.sort === 'recent' ? () => 0
    : inOneCurrency(sessions) ? (a: SessionSummary, b: SessionSummary) => b.totals.cost - a.totals.cost
    : (a: SessionSummary, b: SessionSummary) => tokensOf(b) - tokensOf(a);
  sessions.sort((a, b) => spent(a, b) || byRecent(a, b) || a.session_id.localeCompare(b.session_id) || byKey(a.relay_key_id, b.relay_key_id));
  return sessions.slice(0, query.limit);
}

interface Building {
  client: string | null;
  firstMs: number;
  lastMs: number;
  models: Set<string>;
  /** Cost per currency it was priced in: a session priced in several gets each amount (its totals.cost adds them). */
  costs: Map<string, number>;
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
  s.currencies = [...b.costs.keys()].sort();
  const costs = costsPerCurrency([...b.costs].map(([currency, cost]) => ({ currency, cost })));
  if (costs) s.costs = costs;
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
    const identity = identityOf(event.relay_key_id, id);
    let b = this.sessions.get(identity);
    if (!b) {
      b = {
        client: null, firstMs: started, lastMs: finished, models: new Set(), costs: new Map(),
        summary: {
          session_id: id, relay_key_id: event.relay_key_id, relay_key_prefix: null, client: null, first_started_at: '', last_finished_at: '',
          duration_ms: 0, turns: 0, models: [], currencies: [], totals: emptyTotals(), cache_hit_ratio: null,
        },
      };
      this.sessions.set(identity, b);
    }
    b.client ??= event.client;
    b.summary.relay_key_prefix ??= event.relay_key_prefix;
    b.firstMs = Math.min(b.firstMs, started);
    b.lastMs = Math.max(b.lastMs, finished);
    const model = event.model_slug ?? event.model_requested;
    if (model !== null) b.models.add(model);
    if (event.currency !== null) b.costs.set(event.currency, addMoney(b.costs.get(event.currency) ?? 0, event.cost ?? 0));
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

/** A session's cost per currency as one backend read it; null when it is in several and the backend gave no split. */
function costsOf(s: SessionSummary): CurrencyCost[] | null {
  if (s.costs) return s.costs;
  if (s.currencies.length > 1) return null;
  return s.currencies.map((currency) => ({ currency, cost: s.totals.cost }));
}

/**
 * Sessions added up by `identity`: a session in more than one list (written across a switch of
 * backend) is summed. Entries of different relay keys summed into one name no key.
 */
function addUp(lists: SessionSummary[][], identity: (s: SessionSummary) => string): SessionSummary[] {
  const byId = new Map<string, SessionSummary>();
  // Each session's costs from every backend that has it: a session in one currency per backend may be in two once merged.
  const costLists = new Map<string, Array<CurrencyCost[] | null>>();
  for (const s of lists.flat()) {
    const id = identity(s);
    const into = byId.get(id);
    costLists.set(id, [...(costLists.get(id) ?? []), costsOf(s)]);
    if (!into) {
      byId.set(id, { ...s, models: [...s.models], currencies: [...s.currencies], totals: { ...s.totals } });
      continue;
    }
    if (into.relay_key_id !== s.relay_key_id) {
      into.relay_key_id = null;
      into.relay_key_prefix = null;
    } else {
      into.relay_key_prefix ??= s.relay_key_prefix;
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
  for (const [id, s] of byId) {
    const costs = costLists.get(id)!;
    delete s.costs;
    if (s.currencies.length > 1 && costs.every((c) => c !== null)) s.costs = mergeCosts(costs);
  }
  return [...byId.values()];
}

/** One list from several backends' lists: a session (a relay key's session id) in more than one is added up. */
export function mergeSessions(lists: SessionSummary[][], query: Pick<SessionsQuery, 'sort' | 'limit'>): SessionSummary[] {
  // An in-house backend written before sessions had keys names none: read as keyless, not a 500 at serialization.
  const keyed = lists.map((list) => list.map((s) => (s.relay_key_id === undefined ? { ...s, relay_key_id: null, relay_key_prefix: null } : s)));
  if (keyed.length === 1) return keyed[0]!;
  return sortSessions(addUp(keyed, (s) => identityOf(s.relay_key_id, s.session_id)), query);
}

/**
 * Every relay key's session of one session id as one (GET /api/usage/sessions/{id} without
 * relayKeyId, which answers every request with the id): its relay_key_id is null unless one key made them all.
 */
export function acrossKeys(sessions: SessionSummary[]): SessionSummary | undefined {
  return sessions.length > 1 ? addUp([sessions], (s) => s.session_id)[0] : sessions[0];
}
