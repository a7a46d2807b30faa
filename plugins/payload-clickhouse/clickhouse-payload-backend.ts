// Captured payloads in a ClickHouse table sorted by request_id (point lookups), partitioned by
// month, bodies compressed with ZSTD.
import type { ClickHouseClient } from '@clickhouse/client';
import type { CapturedPayload, PayloadBackend } from '../../core/plugin-api.ts';
import { type BatchWriteOptions, untilAborted } from '../../core/plugin-api/log-backends.ts';

export interface ClickHousePayloadBackendOptions {
  client: ClickHouseClient;
  table: string;
  ttlDays: number;
  ownsClient: boolean;
}

export function payloadTableDdl(table: string, ttlDays: number): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
    request_id String,
    captured_at DateTime64(3, 'UTC'),
    request_body String CODEC(ZSTD(3)),
    response_body String CODEC(ZSTD(3)),
    request_truncated Bool,
    response_truncated Bool,
    request_headers Map(String, String),
    response_headers Map(String, String)
  ) ENGINE = MergeTree
  PARTITION BY toYYYYMM(captured_at)
  ORDER BY request_id
  ${ttlDays > 0 ? `TTL toDateTime(captured_at) + INTERVAL ${Math.floor(ttlDays)} DAY` : ''}
  SETTINGS non_replicated_deduplication_window = 1000`;
}

export class ClickHousePayloadBackend implements PayloadBackend {
  readonly id = 'clickhouse';
  private created: Promise<void> | null = null;

  constructor(private readonly options: ClickHousePayloadBackendOptions) {}

  init(): Promise<void> {
    this.created ??= this.options.client.command({ query: payloadTableDdl(this.options.table, this.options.ttlDays) }).then(() => undefined, (err: unknown) => {
      this.created = null;
      throw err;
    });
    return this.created;
  }

  /** An abort of `signal` destroys the insert's HTTP request (the client's abort_signal), so the call ends at once. */
  async write(payloads: CapturedPayload[], options?: BatchWriteOptions): Promise<void> {
    const signal = options?.signal;
    // The table's creation is shared with reads: an abort stops this call's wait, not it.
    await untilAborted(this.init(), signal);
    // The client reads only an abort that comes after the call: one that came before is read here.
    signal?.throwIfAborted();
    try {
      await this.options.client.insert({
        table: this.options.table, values: payloads, format: 'JSONEachRow', clickhouse_settings: { date_time_input_format: 'best_effort' }, abort_signal: signal,
      });
    } catch (err) {
      throw signal?.aborted ? signal.reason : err;
    }
  }

  async get(requestId: string): Promise<CapturedPayload | null> {
    await this.init();
    const result = await this.options.client.query({
      query: `SELECT request_id, toUnixTimestamp64Milli(captured_at) AS captured_ms, request_body, response_body, request_truncated,
        response_truncated, request_headers, response_headers FROM ${this.options.table} WHERE request_id = {id:String} LIMIT 1`,
      query_params: { id: requestId },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<Record<string, unknown>>();
    if (!row) return null;
    return {
      request_id: String(row.request_id),
      request_body: String(row.request_body),
      response_body: String(row.response_body),
      request_truncated: Boolean(row.request_truncated),
      response_truncated: Boolean(row.response_truncated),
      request_headers: row.request_headers as Record<string, string>,
      response_headers: row.response_headers as Record<string, string>,
      captured_at: new Date(Number(row.captured_ms)).toISOString(),
    };
  }

  async close(): Promise<void> {
    if (this.options.ownsClient) await this.options.client.close();
  }
}
