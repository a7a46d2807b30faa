// Parses the query parameters of /api/logs and /api/usage/* into backend queries. Every error
// is a RelayError 400 that names the parameter.
import { RelayError } from '../errors.ts';
import { daysInMonth } from '../http/calendar.ts';
import type { StatusFilter, UsageFilter } from './types.ts';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

function badParam(field: string, message: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: ${message}`, { field });
}

/** `90s`, `30m`, `24h`, `7d`, `2w` -> seconds. */
export function parseDuration(field: string, value: string): number {
  const match = /^(\d{1,9})([smhdw])$/.exec(value.trim());
  if (!match) throw badParam(field, `expected a duration such as 30m, 24h or 7d, got ${JSON.stringify(value)}`);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2]];
  if (seconds <= 0) throw badParam(field, 'must be greater than zero');
  return seconds;
}

/**
 * The earliest start a window may have: 0000-01-01T00:00:00Z, where the dates `from` accepts
 * (four-digit years) begin. Nine digits of weeks in `since` reach back ~19 million years, past
 * what a Date holds (toISOString throws) and what any backend stores. Written as a number
 * because Date.UTC reads years 0-99 as 1900-1999.
 */
const EARLIEST_MS = -62_167_219_200_000;

/**
 * Ten years: the largest bucket a timeseries needs, since 1000 of them (the default most points)
 * span the whole range a window can cover (years 0 to 9999). Larger ones only overflow Date
 * when the first bucket's start is rounded down.
 */
export const MAX_BUCKET_SECONDS = 3650 * 86_400;

/** `since`: the start of a window reaching back that far from now. */
export function parseSince(value: string, now = Date.now()): Date {
  const from = now - parseDuration('since', value) * 1000;
  if (from < EARLIEST_MS) throw badParam('since', `${JSON.stringify(value)} reaches back before year 0; give a shorter duration`);
  return new Date(from);
}

/** `bucket`: a timeseries bucket, in seconds. */
export function parseBucket(value: string): number {
  const seconds = parseDuration('bucket', value);
  if (seconds > MAX_BUCKET_SECONDS) throw badParam('bucket', `${JSON.stringify(value)} is longer than any timeseries needs: at most 3650d (about ten years)`);
  return seconds;
}

/** `200`, `>=400`, `>400`, `<500`, `<=499`, `4xx`, `5xx`. */
export function parseStatusFilter(field: string, value: string): StatusFilter[] {
  const v = value.replace(/\s+/g, '');
  let match = /^([1-5])xx$/i.exec(v);
  if (match) {
    const base = Number(match[1]) * 100;
    return [{ op: 'gte', value: base }, { op: 'lt', value: base + 100 }];
  }
  match = /^(>=|<=|>|<|=)?(\d{3})$/.exec(v);
  if (!match) throw badParam(field, `expected a status such as 200, >=400, <500 or 4xx, got ${JSON.stringify(value)}`);
  const ops = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt', '=': 'eq', '': 'eq' } as const;
  return [{ op: ops[(match[1] ?? '') as keyof typeof ops], value: Number(match[2]) }];
}

const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):?(\d{2})))?$/;

export function parseDateTime(field: string, value: string): Date {
  // Date-time with a zone (RFC 3339), or a bare date (midnight UTC).
  const m = DATE_TIME_RE.exec(value);
  if (!m) throw badParam(field, `expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z, got ${JSON.stringify(value)}`);
  // Date rolls what does not exist over (30 February is 2 March, 24:00 the next day): refuse it.
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((part) => Number(part ?? 0));
  if (day < 1 || day > daysInMonth(year, month)) {
    throw badParam(field, `${JSON.stringify(value)}: that day does not exist`);
  }
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) {
    throw badParam(field, `${JSON.stringify(value)}: that time of day or offset does not exist`);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw badParam(field, `not a valid date-time: ${JSON.stringify(value)}`);
  return date;
}

/** The query parameters every logs and usage endpoint accepts. */
export interface FilterParams {
  policyId?: string;
  relayKeyId?: string;
  modelId?: string;
  sessionId?: string;
  status?: string;
  since?: string;
  from?: string;
  to?: string;
}

export function parseFilter(params: FilterParams, now = Date.now()): UsageFilter {
  const filter: UsageFilter = {};
  if (params.policyId) filter.policyId = params.policyId;
  if (params.relayKeyId) filter.relayKeyId = params.relayKeyId;
  if (params.modelId) filter.modelId = params.modelId;
  if (params.sessionId) filter.sessionId = params.sessionId;
  if (params.status) filter.status = parseStatusFilter('status', params.status);
  if (params.since && params.from) throw badParam('since', 'give either since or from, not both');
  if (params.since) filter.from = parseSince(params.since, now);
  if (params.from) filter.from = parseDateTime('from', params.from);
  if (params.to) filter.to = parseDateTime('to', params.to);
  if (filter.from && filter.to && filter.from.getTime() >= filter.to.getTime()) {
    throw badParam('to', 'must be later than the start of the window (from or since)');
  }
  return filter;
}
