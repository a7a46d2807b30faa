// What log backends implement. A usage backend stores usage events and (optionally)
// answers the read queries of /api/logs and /api/usage/*; a payload backend stores
// captured bodies by request id. Both are fed in batches by the shared queue.
import type { CapturedPayload, UsageEvent } from '../hooks.ts';
import type { BatchWriteOptions, BatchWriteResult } from './batch-queue.ts';

/** One comparison on the HTTP status; a filter holds one or two (`4xx` is >= 400 and < 500). */
export interface StatusFilter {
  op: 'eq' | 'gte' | 'gt' | 'lte' | 'lt';
  value: number;
}

export interface UsageFilter {
  policyId?: string;
  relayKeyId?: string;
  modelId?: string;
  /** Only events of this agent session (core/observer/sessions.ts: Codex thread-id, Claude Code session id). */
  sessionId?: string;
  /** Only events whose cost is in this currency (ISO code, e.g. USD); events with no cost have none and never match. */
  currency?: string;
  /** Every comparison must hold. */
  status?: StatusFilter[];
  /** Inclusive lower bound on started_at. */
  from?: Date;
  /** Exclusive upper bound on started_at. */
  to?: Date;
}

export interface ListQuery extends UsageFilter {
  limit: number;
  /**
   * Opaque cursor from a previous page (core/observer/cursor.ts). Pages are newest first by
   * (started_at, request_id) with keyset paging, so concurrent writes never shift a page.
   */
  cursor?: string;
}

export interface ListPage {
  items: UsageEvent[];
  nextCursor: string | null;
}

export interface UsageTotals {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost: number;
}

export interface SummaryQuery extends UsageFilter {
  /**
   * Group totals by this dimension as well as overall. `currency` (the cost's currency, null when
   * unpriced) is asked by a budget's reconcile (core/budgets/spend-from-log.ts), not by /api/usage.
   */
  groupBy?: 'model' | 'relay_key' | 'policy' | 'status' | 'currency';
}

export interface Summary {
  totals: UsageTotals;
  groups?: Array<{ key: string | null; totals: UsageTotals }>;
}

export interface TimeseriesQuery extends UsageFilter {
  /** Buckets start at multiples of this many seconds since the epoch (UTC). */
  bucketSeconds: number;
  groupBy?: 'model' | 'relay_key';
}

export interface TimeseriesPoint {
  /** Bucket start, ISO time. */
  t: string;
  key?: string | null;
  totals: UsageTotals;
}

export interface SessionsQuery extends UsageFilter {
  /** Most sessions returned. */
  limit: number;
  /** cost: the costliest first (the default; by tokens when the sessions are priced in more than one currency); recent: the last active first. */
  sort?: 'cost' | 'recent';
}

/** An amount in one currency (ISO 4217 code), where requests are priced in several. */
export interface CurrencyCost {
  currency: string;
  cost: number;
}

/** One agent session (a Codex thread, a Claude Code session) of one relay key: its requests added up. */
export interface SessionSummary {
  session_id: string;
  /** The relay key that made it: a session is a key's, so two keys sending one session id make two sessions. Null for requests made with no key. */
  relay_key_id: string | null;
  /** That key's display prefix, when recorded. */
  relay_key_prefix: string | null;
  /** The client that ran it (codex, claude-code), when recorded. */
  client: string | null;
  /** Start of its first request and end of its last, ISO times. */
  first_started_at: string;
  last_finished_at: string;
  duration_ms: number;
  /** Requests (model calls) in the session. */
  turns: number;
  /** The models it used (relay slugs; the requested name when no model matched), sorted. */
  models: string[];
  /** The currencies its requests were priced in, sorted; none when none was priced. With more than one, totals.cost adds amounts in different currencies. */
  currencies: string[];
  /** Its cost in each currency, the costliest first; only when priced in more than one. Optional for in-house backends: without it the session's cost is named by its currencies only. */
  costs?: CurrencyCost[];
  totals: UsageTotals;
  /** cache_read_tokens / input_tokens; null without input. */
  cache_hit_ratio: number | null;
}

/**
 * Read methods may throw RelayError RELAY_ERR_QUERY_UNSUPPORTED when they cannot answer a
 * particular query (e.g. a scan bound would be exceeded): never a silently partial result.
 */
export interface UsageBackend {
  /** The setting value that selects it: file, postgres, clickhouse, valkey, or an in-house id. */
  id: string;
  /**
   * Stores a batch; throw to have it retried, or resolve with `{ rejected: n }` when n events of it
   * can never be stored (they are counted as dropped). The queue always passes `options`: its
   * `signal` is aborted at the write deadline and at shutdown, and a write that honours it ends
   * its call then (rejecting) so the retry need not wait for a hung call. Optional to honour.
   */
  write(events: UsageEvent[], options?: BatchWriteOptions): Promise<void | BatchWriteResult>;
  /** Read side; a backend that cannot answer leaves these out and Relay says so with a 400. */
  list?(query: ListQuery): Promise<ListPage>;
  get?(requestId: string): Promise<UsageEvent | null>;
  summary?(query: SummaryQuery): Promise<Summary>;
  timeseries?(query: TimeseriesQuery): Promise<TimeseriesPoint[]>;
  /** Agent sessions in the filter's window, sorted and cut to the query's limit. */
  sessions?(query: SessionsQuery): Promise<SessionSummary[]>;
  close?(): Promise<void>;
}

export interface PayloadBackend {
  /** file, s3, clickhouse, or an in-house id. */
  id: string;
  /** As UsageBackend.write. */
  write(payloads: CapturedPayload[], options?: BatchWriteOptions): Promise<void | BatchWriteResult>;
  get?(requestId: string): Promise<CapturedPayload | null>;
  close?(): Promise<void>;
}
