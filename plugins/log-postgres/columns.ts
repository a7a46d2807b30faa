// The usage table's columns: SQL types, and the mapping between rows and usage events.
import type { UsageEvent } from '../../core/plugin-api.ts';

/** Column name -> SQL type, in UsageEvent field order. */
export const COLUMNS: ReadonlyArray<readonly [keyof UsageEvent, string]> = [
  ['request_id', 'text'],
  ['started_at', 'timestamptz'],
  ['finished_at', 'timestamptz'],
  ['relay_key_id', 'text'],
  ['relay_key_prefix', 'text'],
  ['policy_id', 'text'],
  ['model_requested', 'text'],
  ['model_id', 'text'],
  ['model_slug', 'text'],
  ['host_id', 'text'],
  ['host_key_id', 'text'],
  ['provider_id', 'text'],
  ['upstream_model', 'text'],
  ['inbound_shape', 'text'],
  ['upstream_shape', 'text'],
  ['status', 'smallint'],
  ['error_code', 'text'],
  ['stream', 'boolean'],
  ['input_tokens', 'bigint'],
  ['output_tokens', 'bigint'],
  ['cache_read_tokens', 'bigint'],
  ['cache_write_tokens', 'bigint'],
  ['reasoning_tokens', 'bigint'],
  ['cost', 'double precision'],
  ['currency', 'text'],
  ['latency_ms', 'double precision'],
  ['ttfb_ms', 'double precision'],
  ['attempts', 'smallint'],
  ['client_aborted', 'boolean'],
  ['client', 'text'],
  ['extras', 'jsonb'],
  ['client_request_id', 'text'],
  ['upstream_request_id', 'text'],
];

export const COLUMN_LIST = COLUMNS.map(([name]) => name).join(', ');

/** `x(request_id text, ...)`: the record definition for jsonb_to_recordset. */
export const RECORD_DEFINITION = COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');

const isoOf = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export function rowToEvent(row: Record<string, unknown>): UsageEvent {
  return {
    request_id: String(row.request_id),
    started_at: isoOf(row.started_at),
    finished_at: isoOf(row.finished_at),
    relay_key_id: row.relay_key_id as string | null,
    relay_key_prefix: row.relay_key_prefix as string | null,
    policy_id: row.policy_id as string | null,
    model_requested: row.model_requested as string | null,
    model_id: row.model_id as string | null,
    model_slug: row.model_slug as string | null,
    host_id: row.host_id as string | null,
    host_key_id: row.host_key_id as string | null,
    provider_id: row.provider_id as string | null,
    upstream_model: row.upstream_model as string | null,
    inbound_shape: String(row.inbound_shape),
    upstream_shape: row.upstream_shape as string | null,
    status: Number(row.status),
    error_code: row.error_code as string | null,
    stream: Boolean(row.stream),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost: numberOrNull(row.cost),
    currency: row.currency as string | null,
    latency_ms: Number(row.latency_ms),
    ttfb_ms: numberOrNull(row.ttfb_ms),
    attempts: Number(row.attempts),
    client_aborted: Boolean(row.client_aborted),
    client: row.client as string | null,
    extras: (typeof row.extras === 'string' ? JSON.parse(row.extras) : row.extras ?? {}) as Record<string, string>,
    client_request_id: (row.client_request_id ?? null) as string | null,
    upstream_request_id: (row.upstream_request_id ?? null) as string | null,
  };
}
