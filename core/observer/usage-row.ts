// A usage event from a row of a SQL backend's table: the columns are the event's members, read
// back with the types the event declares (drivers hand numbers back as strings, JSON as text).
import type { UsageEvent } from '../hooks.ts';

type Row = Record<string, unknown>;

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const text = (value: unknown): string | null => (value ?? null) as string | null;

/** The event in `row`; its start and finish times come from the caller (each store keeps them its own way). */
export function usageEventFromRow(row: Row, times: { started_at: string; finished_at: string }): UsageEvent {
  return {
    request_id: String(row.request_id),
    started_at: times.started_at,
    finished_at: times.finished_at,
    relay_key_id: text(row.relay_key_id),
    relay_key_prefix: text(row.relay_key_prefix),
    policy_id: text(row.policy_id),
    model_requested: text(row.model_requested),
    model_id: text(row.model_id),
    model_slug: text(row.model_slug),
    host_id: text(row.host_id),
    host_key_id: text(row.host_key_id),
    provider_id: text(row.provider_id),
    upstream_model: text(row.upstream_model),
    inbound_shape: String(row.inbound_shape),
    upstream_shape: text(row.upstream_shape),
    status: Number(row.status),
    error_code: text(row.error_code),
    stream: Boolean(row.stream),
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost: numberOrNull(row.cost),
    currency: text(row.currency),
    latency_ms: Number(row.latency_ms),
    ttfb_ms: numberOrNull(row.ttfb_ms),
    attempts: Number(row.attempts),
    client_aborted: Boolean(row.client_aborted),
    client: text(row.client),
    extras: (typeof row.extras === 'string' ? JSON.parse(row.extras) : row.extras ?? {}) as Record<string, string>,
    client_request_id: text(row.client_request_id),
    upstream_request_id: text(row.upstream_request_id),
  };
}
