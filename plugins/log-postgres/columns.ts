// The usage table's columns: SQL types, and the mapping between rows and usage events.
import type { UsageEvent } from '../../core/plugin-api.ts';
import { usageEventFromRow } from '../../core/plugin-api/log-backends.ts';

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

export function rowToEvent(row: Record<string, unknown>): UsageEvent {
  return usageEventFromRow(row, { started_at: isoOf(row.started_at), finished_at: isoOf(row.finished_at) });
}
