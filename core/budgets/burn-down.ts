// A budget's burn-down: its spend in the current window added up bucket by bucket, and where the
// spending rate so far takes it by the window's end (a straight line: spent / elapsed x length).
import type { Budget } from '../catalog/kinds.ts';
import type { TimeseriesPoint } from '../observer/types.ts';
import type { BudgetStatus } from './budget-guard.ts';

const HOUR = 3600;
const DAY = 86_400;

/** The chart's span: the window, or for a lifetime budget, from its creation (earlier spend is the first point's start). */
export function burnDownSpan(budget: Budget, status: BudgetStatus, now: number): { fromMs: number; toMs: number; bucketSeconds: number } {
  const windowStart = Date.parse(status.windowStart);
  const fromMs = budget.spec.window === 'lifetime' ? Math.min(Date.parse(budget.metadata.createdAt), now - HOUR * 1000) : windowStart;
  const toMs = status.resetsAt === null ? now : Date.parse(status.resetsAt);
  const spanSeconds = (toMs - fromMs) / 1000;
  // At most ~200 buckets: hours up to a week, then 6 hours up to seven weeks, then days.
  const bucketSeconds = spanSeconds <= 8 * DAY ? HOUR : spanSeconds <= 50 * DAY ? 6 * HOUR : Math.max(DAY, Math.ceil(spanSeconds / 200 / DAY) * DAY);
  return { fromMs, toMs, bucketSeconds };
}

export interface BurnDownPoint {
  t: string;
  /** Spent from the window's start to the end of this bucket. */
  amount: number;
  tokens: number;
}

export function cumulative(points: TimeseriesPoint[], offset: { amount: number; tokens: number }): BurnDownPoint[] {
  let amount = offset.amount;
  let tokens = offset.tokens;
  return [...points].sort((a, b) => Date.parse(a.t) - Date.parse(b.t)).map((p) => {
    amount += p.totals.cost;
    tokens += p.totals.input_tokens + p.totals.output_tokens;
    return { t: p.t, amount: Math.round(amount * 1e6) / 1e6, tokens };
  });
}

export interface Projection {
  /** The window's end. */
  at: string;
  amount: number;
  tokens: number;
  /** When the rate so far reaches the limit (the earlier of money and tokens); null if not before the end. */
  limitReachedAt: string | null;
}

/** Where the rate so far takes spend by the window's end; null for rolling and lifetime windows (no end). */
export function projection(status: BudgetStatus, now: number): Projection | null {
  if (status.resetsAt === null) return null;
  const start = Date.parse(status.windowStart);
  const end = Date.parse(status.resetsAt);
  const elapsed = Math.max(1, now - start);
  const scale = (end - start) / elapsed;
  const reach = (spent: number, limit: number | null): number | null => {
    if (limit === null || spent <= 0) return null;
    const at = start + (limit / spent) * elapsed;
    return at <= end ? Math.max(at, Math.min(now, end)) : null;
  };
  const times = [reach(status.spentAmount, status.limitAmount), reach(status.spentTokens, status.limitTokens)].filter((x): x is number => x !== null);
  return {
    at: status.resetsAt,
    amount: Math.round(status.spentAmount * scale * 1e6) / 1e6,
    tokens: Math.round(status.spentTokens * scale),
    limitReachedAt: times.length === 0 ? null : new Date(Math.min(...times)).toISOString(),
  };
}
