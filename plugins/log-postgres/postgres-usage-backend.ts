// Usage events in a Postgres (or PGlite) table: batched inserts, reads in SQL.
import { cacheHitRatio, costsPerCurrency, decodeCursor, type BatchWriteOptions, type BatchWriteResult, emptyTotals, encodeCursor, fromMicros, type Database, type ListPage, type ListQuery, type SessionSummary, type SessionsQuery, type Summary, type SummaryQuery, type TimeseriesPoint, type TimeseriesQuery, type UsageTotals, untilAborted } from '../../core/plugin-api/log-backends.ts';
import { type UsageBackend, type UsageEvent } from '../../core/plugin-api.ts';
import { COLUMN_LIST, RECORD_DEFINITION, rowToEvent } from './columns.ts';
import { migrate } from './migrations.ts';
import { SESSION_ID_SQL, whereOf } from './sql-filter.ts';

type Db = Pick<Database, 'query' | 'transaction'>;

const TOTALS_SQL = `count(*)::float8 AS requests,
  count(*) FILTER (WHERE status >= 400)::float8 AS errors,
  coalesce(sum(input_tokens), 0)::float8 AS input_tokens,
  coalesce(sum(output_tokens), 0)::float8 AS output_tokens,
  coalesce(sum(cache_read_tokens), 0)::float8 AS cache_read_tokens,
  coalesce(sum(cache_write_tokens), 0)::float8 AS cache_write_tokens,
  coalesce(sum(reasoning_tokens), 0)::float8 AS reasoning_tokens,
  coalesce(sum(round(cost * 1000000)), 0)::float8 AS cost_micros`;

const GROUP_COLUMNS = { model: 'model_id', relay_key: 'relay_key_id', policy: 'policy_id', status: 'status', currency: 'currency' } as const;

function totalsOf(row: Record<string, unknown>): UsageTotals {
  const totals = emptyTotals();
  for (const key of Object.keys(totals) as Array<keyof UsageTotals>) totals[key] = Number(row[key] ?? 0);
  // Summed as whole micro-units in SQL: a sum of the doubles shows float noise.
  totals.cost = fromMicros(Number(row.cost_micros ?? 0));
  return totals;
}

export interface PostgresUsageBackendOptions {
  db: Db;
  table: string;
  /** Closes a connection the backend opened itself (not relay.db). */
  onClose?: () => Promise<void>;
  /** Where an event the table cannot hold is reported. */
  log?: { error(obj: object, msg: string): void };
}

/** SQLSTATE class 22, a data exception (a number out of range, text that is no timestamp): the same rows fail however often they are retried. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

export class PostgresUsageBackend implements UsageBackend {
  readonly id = 'postgres';
  private readonly db: Db;
  private readonly table: string;
  private migrated: Promise<void> | null = null;

  constructor(private readonly options: PostgresUsageBackendOptions) {
    this.db = options.db;
    this.table = options.table;
  }

  /** Resolves once the schema is in place; a failed migration is tried again on the next call. */
  init(): Promise<void> {
    this.migrated ??= migrate(this.db, this.table).catch((err: unknown) => {
      this.migrated = null;
      throw err;
    });
    return this.migrated;
  }

  private get ready(): Promise<void> {
    return this.init();
  }

  /** An abort of `signal` closes the connection of the insert in flight (Database.query), so the call ends at once. */
  async write(events: UsageEvent[], options?: BatchWriteOptions): Promise<BatchWriteResult | undefined> {
    const signal = options?.signal;
    // The migration is shared with reads and later writes: an abort stops this call's wait, not it.
    await untilAborted(this.ready, signal);
    try {
      await this.insert(events, signal);
      return undefined;
    } catch (err) {
      if (!isDataError(err)) throw err;
      // A value the table cannot hold fails the whole statement: one row at a time finds it, and
      // the rest of the batch is kept instead of being retried with it until the queue gives up.
      return { rejected: await this.insertEach(events, signal) };
    }
  }

  /** One statement per batch: the rows travel as one JSON parameter, so a batch of any size stays under Postgres's parameter limit. Retried batches do not duplicate (request_id is the key). */
  private async insert(events: UsageEvent[], signal?: AbortSignal): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.table} (${COLUMN_LIST})
       SELECT ${COLUMN_LIST} FROM jsonb_to_recordset($1::jsonb) AS x(${RECORD_DEFINITION})
       ON CONFLICT (request_id) DO NOTHING`,
      [JSON.stringify(events)],
      signal ? { signal } : undefined,
    );
  }

  /**
   * Inserts each event alone; an event with a data error is logged and left out, and how many
   * were is returned (the queue counts them as dropped, `rejected`). Another error rejects, so the
   * queue retries the batch (the rows already in are skipped then). When no event fits, rejects as
   * not retryable: the queue drops the batch at once and counts it.
   */
  private async insertEach(events: UsageEvent[], signal?: AbortSignal): Promise<number> {
    let lastDataError: unknown = null;
    let written = 0;
    for (const event of events) {
      try {
        await this.insert([event], signal);
        written += 1;
      } catch (err) {
        if (!isDataError(err)) throw err;
        lastDataError = err;
        this.options.log?.error({ err, request_id: event.request_id }, 'log-postgres: a usage event the table cannot hold was dropped');
      }
    }
    if (written === 0 && lastDataError !== null) throw Object.assign(new Error('log-postgres: no usage event of the batch fits the table', { cause: lastDataError }), { retryable: false });
    return events.length - written;
  }

  async list(query: ListQuery): Promise<ListPage> {
    await this.ready;
    const where = whereOf(query, query.cursor ? decodeCursor(query.cursor) : null);
    where.params.push(query.limit + 1);
    const { rows } = await this.db.query(
      `SELECT ${COLUMN_LIST} FROM ${this.table} ${where.clause} ORDER BY started_at DESC, request_id DESC LIMIT $${where.params.length}`,
      where.params,
    );
    const items = rows.slice(0, query.limit).map(rowToEvent);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null };
  }

  async get(requestId: string): Promise<UsageEvent | null> {
    await this.ready;
    const { rows } = await this.db.query(`SELECT ${COLUMN_LIST} FROM ${this.table} WHERE request_id = $1`, [requestId]);
    return rows[0] ? rowToEvent(rows[0]) : null;
  }

  async summary(query: SummaryQuery): Promise<Summary> {
    await this.ready;
    const where = whereOf(query);
    if (!query.groupBy) {
      const { rows } = await this.db.query(`SELECT ${TOTALS_SQL} FROM ${this.table} ${where.clause}`, where.params);
      return { totals: totalsOf(rows[0] ?? {}) };
    }
    const column = GROUP_COLUMNS[query.groupBy];
    const { rows } = await this.db.query(
      `SELECT grouping(${column}) AS overall, ${column}::text AS key, ${TOTALS_SQL}
       FROM ${this.table} ${where.clause} GROUP BY GROUPING SETS ((), (${column}))`,
      where.params,
    );
    const overall = rows.find((r) => Number(r.overall) === 1);
    const groups = rows.filter((r) => Number(r.overall) === 0)
      .map((r) => ({ key: (r.key as string | null) ?? null, totals: totalsOf(r) }))
      .sort((a, b) => b.totals.requests - a.totals.requests || String(a.key).localeCompare(String(b.key)));
    return { totals: overall ? totalsOf(overall) : emptyTotals(), groups };
  }

  async timeseries(query: TimeseriesQuery): Promise<TimeseriesPoint[]> {
    await this.ready;
    const where = whereOf(query);
    where.params.push(query.bucketSeconds);
    const size = `$${where.params.length}::float8`;
    const key = query.groupBy ? `, ${GROUP_COLUMNS[query.groupBy]}::text AS key` : '';
    const { rows } = await this.db.query(
      `SELECT (floor(extract(epoch FROM started_at)::float8 / ${size}) * ${size}) AS bucket${key}, ${TOTALS_SQL}
       FROM ${this.table} ${where.clause} GROUP BY 1${key ? ', 2' : ''} ORDER BY 1${key ? ', 2' : ''}`,
      where.params,
    );
    return rows.map((r) => ({
      t: new Date(Number(r.bucket) * 1000).toISOString(),
      ...(query.groupBy ? { key: (r.key as string | null) ?? null } : {}),
      totals: totalsOf(r),
    }));
  }

  async sessions(query: SessionsQuery): Promise<SessionSummary[]> {
    await this.ready;
    const where = whereOf(query);
    where.params.push(query.limit);
    // Costs in different currencies do not compare: sessions priced in more than one are ordered by tokens (sessions.ts).
    const spent = `CASE WHEN (SELECT count(DISTINCT currency) FROM e) > 1 THEN input_tokens + output_tokens ELSE cost_micros END`;
    // A session is a relay key's (core/observer/sessions.ts): two keys sending one id are two sessions.
    const order = query.sort === 'recent' ? 'last_at DESC, session_id, relay_key_id' : `${spent} DESC, last_at DESC, session_id, relay_key_id`;
    const { rows } = await this.db.query(
      `WITH e AS (SELECT * FROM (SELECT *, ${SESSION_ID_SQL} AS session_id FROM ${this.table} ${where.clause}) AS w WHERE session_id IS NOT NULL),
         s AS (SELECT relay_key_id, session_id, max(relay_key_prefix) AS relay_key_prefix, max(client) AS client, min(started_at) AS first_at, max(finished_at) AS last_at,
           array_remove(array_agg(DISTINCT coalesce(model_slug, model_requested)), NULL) AS models,
           array_remove(array_agg(DISTINCT currency), NULL) AS currencies, ${TOTALS_SQL}
         FROM e GROUP BY relay_key_id, session_id),
         c AS (SELECT relay_key_id, session_id, json_agg(json_build_object('currency', currency, 'micros', micros)) AS cost_split
           FROM (SELECT relay_key_id, session_id, currency, coalesce(sum(round(cost * 1000000)), 0)::float8 AS micros FROM e WHERE currency IS NOT NULL GROUP BY 1, 2, 3) AS pc
           GROUP BY relay_key_id, session_id HAVING count(*) > 1)
       SELECT s.*, c.cost_split FROM s LEFT JOIN c ON c.session_id = s.session_id AND c.relay_key_id IS NOT DISTINCT FROM s.relay_key_id
       ORDER BY ${order} LIMIT $${where.params.length}`,
      where.params,
    );
    return rows.map((r) => {
      const totals = totalsOf(r);
      const costs = costsPerCurrency(((r.cost_split ?? []) as Array<{ currency: string; micros: number }>).map((c) => ({ currency: c.currency, cost: fromMicros(c.micros) })));
      const first = new Date(r.first_at as string | Date);
      const last = new Date(r.last_at as string | Date);
      return {
        session_id: String(r.session_id), relay_key_id: (r.relay_key_id as string | null) ?? null, relay_key_prefix: (r.relay_key_prefix as string | null) ?? null,
        client: (r.client as string | null) ?? null,
        first_started_at: first.toISOString(), last_finished_at: last.toISOString(), duration_ms: last.getTime() - first.getTime(),
        turns: totals.requests, models: [...(r.models as string[])].sort(), currencies: [...(r.currencies as string[])].sort(), ...(costs ? { costs } : {}), totals,
        cache_hit_ratio: cacheHitRatio(totals.cache_read_tokens, totals.input_tokens),
      };
    });
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }
}
