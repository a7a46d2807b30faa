// UsageFilter -> a ClickHouse WHERE clause with typed query parameters ({name:Type}).
import type { CursorPosition, StatusFilter, UsageFilter } from '../../core/plugin-api/log-backends.ts';

/** The session an event belongs to (core/observer/session-id.ts); a missing Map key reads as ''. */
export const SESSION_ID_SQL = `if(extras['thread-id'] != '', extras['thread-id'], extras['x-claude-code-session-id'])`;

const OPERATORS: Record<StatusFilter['op'], string> = { eq: '=', gte: '>=', gt: '>', lte: '<=', lt: '<' };

export interface ChWhere {
  clause: string;
  params: Record<string, unknown>;
}

export function whereOf(filter: UsageFilter, after: CursorPosition | null = null): ChWhere {
  const conditions: string[] = [];
  const params: Record<string, unknown> = {};
  const param = (type: string, value: unknown) => {
    const name = `p${Object.keys(params).length}`;
    params[name] = value;
    return `{${name}:${type}}`;
  };
  if (filter.policyId !== undefined) conditions.push(`policy_id = ${param('String', filter.policyId)}`);
  if (filter.relayKeyId !== undefined) conditions.push(`relay_key_id = ${param('String', filter.relayKeyId)}`);
  if (filter.modelId !== undefined) conditions.push(`model_id = ${param('String', filter.modelId)}`);
  if (filter.sessionId !== undefined) conditions.push(`${SESSION_ID_SQL} = ${param('String', filter.sessionId)}`);
  if (filter.currency !== undefined) conditions.push(`currency = ${param('String', filter.currency)}`);
  for (const s of filter.status ?? []) conditions.push(`status ${OPERATORS[s.op]} ${param('UInt16', s.value)}`);
  if (filter.from) conditions.push(`started_at >= fromUnixTimestamp64Milli(${param('Int64', filter.from.getTime())}, 'UTC')`);
  if (filter.to) conditions.push(`started_at < fromUnixTimestamp64Milli(${param('Int64', filter.to.getTime())}, 'UTC')`);
  if (after) {
    conditions.push(`(started_at, request_id) < (fromUnixTimestamp64Milli(${param('Int64', after.startedAtMs)}, 'UTC'), ${param('String', after.requestId)})`);
  }
  return { clause: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

export const TOTALS_SQL = `count() AS requests, countIf(status >= 400) AS errors,
  sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
  sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens,
  sum(reasoning_tokens) AS reasoning_tokens, sum(toInt64(round(ifNull(cost, 0) * 1000000))) AS cost_micros`;

export const GROUP_EXPRESSIONS = { model: 'model_id', relay_key: 'relay_key_id', policy: 'policy_id', status: 'toString(status)', currency: 'currency' } as const;

/** Columns as stored, with the two times as epoch milliseconds. */
export const EVENT_COLUMNS = `request_id, toUnixTimestamp64Milli(started_at) AS started_ms, toUnixTimestamp64Milli(finished_at) AS finished_ms,
  relay_key_id, relay_key_prefix, policy_id, model_requested, model_id, model_slug, host_id, host_key_id, provider_id,
  upstream_model, inbound_shape, upstream_shape, status, error_code, stream, input_tokens, output_tokens, cache_read_tokens,
  cache_write_tokens, reasoning_tokens, cost, currency, latency_ms, ttfb_ms, attempts, client_aborted, client, extras,
  client_request_id, upstream_request_id`;
