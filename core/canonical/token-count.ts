// Token counts as an upstream reports them, bounded: a count is a whole number from 0 to
// MAX_TOKEN_COUNT. An upstream's absurd count (1e20, a fraction, a negative) would otherwise reach
// the usage log, where it fits no column (Postgres bigint, ClickHouse UInt64), and the rate limits.
import { MAX_TOKEN_COUNT, type Usage } from './types.ts';

/** A reported count as a whole number from 0 to MAX_TOKEN_COUNT; 0 for anything that is not a finite number. */
export function tokenCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return 0;
  return Math.min(Math.round(value), MAX_TOKEN_COUNT);
}

const COUNTS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cache_write_1h_tokens', 'reasoning_tokens', 'web_search_requests'] as const;

/** `usage` with every count bounded as tokenCount bounds it (a sum of bounded counts may pass the bound); the same object when all are in range. */
export function boundedUsage(usage: Usage): Usage {
  if (COUNTS.every((key) => usage[key] === undefined || tokenCount(usage[key]) === usage[key])) return usage;
  const out: Usage = { ...usage };
  for (const key of COUNTS) if (out[key] !== undefined) out[key] = tokenCount(out[key]);
  return out;
}
