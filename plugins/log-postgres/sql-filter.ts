// UsageFilter -> a WHERE clause with numbered parameters.
import type { CursorPosition, StatusFilter, UsageFilter } from '../../core/plugin-api/log-backends.ts';

/** The session an event belongs to (core/observer/session-id.ts), as SQL; indexed (migrations.ts). */
export const SESSION_ID_SQL = `coalesce(nullif(extras->>'thread-id', ''), nullif(extras->>'x-claude-code-session-id', ''))`;

const OPERATORS: Record<StatusFilter['op'], string> = { eq: '=', gte: '>=', gt: '>', lte: '<=', lt: '<' };

export interface SqlWhere {
  clause: string;
  params: unknown[];
}

export function whereOf(filter: UsageFilter, after: CursorPosition | null = null, params: unknown[] = []): SqlWhere {
  const conditions: string[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.policyId !== undefined) conditions.push(`policy_id = ${param(filter.policyId)}`);
  if (filter.relayKeyId !== undefined) conditions.push(`relay_key_id = ${param(filter.relayKeyId)}`);
  if (filter.modelId !== undefined) conditions.push(`model_id = ${param(filter.modelId)}`);
  if (filter.sessionId !== undefined) conditions.push(`${SESSION_ID_SQL} = ${param(filter.sessionId)}`);
  if (filter.currency !== undefined) conditions.push(`currency = ${param(filter.currency)}`);
  for (const s of filter.status ?? []) conditions.push(`status ${OPERATORS[s.op]} ${param(s.value)}`);
  if (filter.from) conditions.push(`started_at >= ${param(filter.from.toISOString())}::timestamptz`);
  if (filter.to) conditions.push(`started_at < ${param(filter.to.toISOString())}::timestamptz`);
  if (after) {
    conditions.push(`(started_at, request_id) < (${param(new Date(after.startedAtMs).toISOString())}::timestamptz, ${param(after.requestId)})`);
  }
  return { clause: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}
