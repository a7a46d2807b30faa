// Usage events in ClickHouse: JSONEachRow batch inserts, reads in SQL.
import type { ClickHouseClient } from '@clickhouse/client';
import { cacheHitRatio, costsPerCurrency, usageEventFromRow, decodeCursor, emptyTotals, encodeCursor, fromMicros, type ListPage, type ListQuery, type SessionSummary, type SessionsQuery, type Summary, type SummaryQuery, type TimeseriesPoint, type TimeseriesQuery, type UsageTotals, type BatchWriteOptions, untilAborted } from '../../core/plugin-api/log-backends.ts';
import { type UsageBackend, type UsageEvent } from '../../core/plugin-api.ts';
import { EVENT_COLUMNS, GROUP_EXPRESSIONS, SESSION_ID_SQL, TOTALS_SQL, whereOf } from './query.ts';
import { usageTableAdditions, usageTableDdl } from './schema.ts';

export interface ClickHouseUsageBackendOptions {
  client: ClickHouseClient;
  table: string;
  ttlDays: number;
  /** Close the client on close (false when it is shared). */
  ownsClient: boolean;
}

type Row = Record<string, unknown>;

const isoOfMs = (ms: unknown): string => new Date(Number(ms)).toISOString();

function rowToEvent(row: Row): UsageEvent {
  return usageEventFromRow(row, { started_at: isoOfMs(row.started_ms), finished_at: isoOfMs(row.finished_ms) });
}

function totalsOf(row: Row | undefined): UsageTotals {
  const totals = emptyTotals();
  if (row) for (const key of Object.keys(totals) as Array<keyof UsageTotals>) totals[key] = Number(row[key] ?? 0);
  // Summed as whole micro-units in SQL: a sum of the doubles shows float noise.
  totals.cost = fromMicros(Number(row?.cost_micros ?? 0));
  return totals;
}

/** The overall row of a grouped query: every event is in exactly one group, so one query answers both. */
function sumOfGroups(rows: Row[]): Row {
  const sum: Row = {};
  for (const row of rows) for (const [column, value] of Object.entries(row)) if (column !== 'key') sum[column] = Number(sum[column] ?? 0) + Number(value);
  return sum;
}

export class ClickHouseUsageBackend implements UsageBackend {
  readonly id = 'clickhouse';
  private readonly client: ClickHouseClient;
  private readonly table: string;
  private created: Promise<void> | null = null;

  constructor(private readonly options: ClickHouseUsageBackendOptions) {
    this.client = options.client;
    this.table = options.table;
  }

  /** Creates the table if needed; a failure is tried again on the next call. */
  init(): Promise<void> {
    this.created ??= this.client.command({ query: usageTableDdl(this.table, this.options.ttlDays) }).then(async () => {
      for (const query of usageTableAdditions(this.table)) await this.client.command({ query });
    }).then(() => undefined, (err: unknown) => {
      this.created = null;
      throw err;
    });
    return this.created;
  }

  private async rows(query: string, params: Record<string, unknown>): Promise<Row[]> {
    await this.init();
    const result = await this.client.query({ query, query_params: params, format: 'JSONEachRow' });
    return result.json<Row>();
  }

  /** An abort of `signal` destroys the insert's HTTP request (the client's abort_signal), so the call ends at once. */
  async write(events: UsageEvent[], options?: BatchWriteOptions): Promise<void> {
    const signal = options?.signal;
    // The table's creation is shared with reads: an abort stops this call's wait, not it.
    await untilAborted(this.init(), signal);
    // The client reads only an abort that comes after the call: one that came before is read here.
    signal?.throwIfAborted();
    try {
      // A retried batch is the same block, which the table's deduplication window drops.
      await this.client.insert({
        table: this.table, values: events, format: 'JSONEachRow', clickhouse_settings: { date_time_input_format: 'best_effort' }, abort_signal: signal,
      });
    } catch (err) {
      throw signal?.aborted ? signal.reason : err;
    }
  }

  async list(query: ListQuery): Promise<ListPage> {
    const where = whereOf(query, query.cursor ? decodeCursor(query.cursor) : null);
    const rows = await this.rows(
      `SELECT ${EVENT_COLUMNS} FROM ${this.table} ${where.clause} ORDER BY started_at DESC, request_id DESC LIMIT ${query.limit + 1}`,
      where.params,
    );
    const items = rows.slice(0, query.limit).map(rowToEvent);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null };
  }

  async get(requestId: string): Promise<UsageEvent | null> {
    const rows = await this.rows(`SELECT ${EVENT_COLUMNS} FROM ${this.table} WHERE request_id = {id:String} LIMIT 1`, { id: requestId });
    return rows[0] ? rowToEvent(rows[0]) : null;
  }

  async summary(query: SummaryQuery): Promise<Summary> {
    const where = whereOf(query);
    if (!query.groupBy) {
      const [overall] = await this.rows(`SELECT ${TOTALS_SQL} FROM ${this.table} ${where.clause}`, where.params);
      return { totals: totalsOf(overall) };
    }
    const rows = await this.rows(
      `SELECT ${GROUP_EXPRESSIONS[query.groupBy]} AS key, ${TOTALS_SQL} FROM ${this.table} ${where.clause} GROUP BY key ORDER BY requests DESC, key`,
      where.params,
    );
    return { totals: totalsOf(sumOfGroups(rows)), groups: rows.map((r) => ({ key: (r.key as string | null) ?? null, totals: totalsOf(r) })) };
  }

  async sessions(query: SessionsQuery): Promise<SessionSummary[]> {
    const where = whereOf(query);
    where.params.session_limit = query.limit;
    const inSessions = `${where.clause ? `${where.clause} AND` : 'WHERE'} ${SESSION_ID_SQL} != ''`;
    // Costs in different currencies do not compare: sessions priced in more than one are ordered by tokens (sessions.ts).
    const spent = `if((SELECT uniqExact(currency) FROM ${this.table} ${inSessions}) > 1, toInt64(input_tokens + output_tokens), cost_micros)`;
    // A session is a relay key's (core/observer/sessions.ts): two keys sending one id are two sessions.
    const order = query.sort === 'recent' ? 'last_ms DESC, session_id, relay_key_id' : `${spent} DESC, last_ms DESC, session_id, relay_key_id`;
    const rows = await this.rows(
      `SELECT relay_key_id, ${SESSION_ID_SQL} AS session_id, max(relay_key_prefix) AS key_prefix, max(client) AS client_name,
         toUnixTimestamp64Milli(min(started_at)) AS first_ms, toUnixTimestamp64Milli(max(finished_at)) AS last_ms,
         groupUniqArray(coalesce(model_slug, model_requested)) AS models, groupUniqArray(currency) AS currencies, ${TOTALS_SQL},
         sumMap([CAST(ifNull(currency, '') AS String)], [toInt64(round(ifNull(cost, 0) * 1000000))]) AS cost_split
       FROM ${this.table} ${where.clause ? `${where.clause} AND` : 'WHERE'} session_id != ''
       GROUP BY relay_key_id, session_id ORDER BY ${order} LIMIT {session_limit:UInt32}`,
      where.params,
    );
    return rows.map((r) => {
      const totals = totalsOf(r);
      // sumMap's (currencies, micro-units): '' holds the unpriced events, which are in no currency.
      const [currencies, micros] = r.cost_split as [string[], Array<string | number>];
      const costs = costsPerCurrency(currencies.flatMap((currency, i) => (currency === '' ? [] : [{ currency, cost: fromMicros(Number(micros[i])) }])));
      const first = Number(r.first_ms);
      const last = Number(r.last_ms);
      return {
        session_id: String(r.session_id), relay_key_id: (r.relay_key_id as string | null) ?? null, relay_key_prefix: (r.key_prefix as string | null) ?? null,
        client: (r.client_name as string | null) ?? null,
        first_started_at: new Date(first).toISOString(), last_finished_at: new Date(last).toISOString(), duration_ms: last - first,
        turns: totals.requests, models: (r.models as Array<string | null>).filter((m): m is string => m !== null).sort(),
        currencies: (r.currencies as Array<string | null>).filter((c): c is string => c !== null).sort(), ...(costs ? { costs } : {}), totals,
        cache_hit_ratio: cacheHitRatio(totals.cache_read_tokens, totals.input_tokens),
      };
    });
  }

  async timeseries(query: TimeseriesQuery): Promise<TimeseriesPoint[]> {
    const where = whereOf(query);
    where.params.bucket_ms = query.bucketSeconds * 1000;
    const key = query.groupBy ? `, ${GROUP_EXPRESSIONS[query.groupBy]} AS key` : '';
    const rows = await this.rows(
      `SELECT intDiv(toUnixTimestamp64Milli(started_at), {bucket_ms:Int64}) * {bucket_ms:Int64} AS bucket${key}, ${TOTALS_SQL}
       FROM ${this.table} ${where.clause} GROUP BY bucket${key ? ', key' : ''} ORDER BY bucket${key ? ', key' : ''}`,
      where.params,
    );
    return rows.map((r) => ({
      t: new Date(Number(r.bucket)).toISOString(),
      ...(query.groupBy ? { key: (r.key as string | null) ?? null } : {}),
      totals: totalsOf(r),
    }));
  }

  async close(): Promise<void> {
    if (this.options.ownsClient) await this.client.close();
  }
}
