// The burn-down's arithmetic: cumulative spend per bucket, the straight-line projection to the
// window's end and when it reaches the limit, and the chart's span and bucket per window kind.
import t from 'tap';
import { burnDownSpan, cumulative, projection } from '../../core/budgets/burn-down.ts';
import type { BudgetStatus } from '../../core/budgets/budget-guard.ts';
import type { Budget, BudgetSpec } from '../../core/catalog/kinds.ts';
import { emptyTotals } from '../../core/observer/usage-query.ts';

const status = (over: Partial<BudgetStatus>): BudgetStatus => ({
  budgetId: 'b', windowStart: '2026-11-01T00:00:00.000Z', resetsAt: '2026-12-01T00:00:00.000Z', spentAmount: 0, spentTokens: 0,
  limitAmount: 30, limitTokens: null, remainingAmount: 30, remainingTokens: null, currency: 'USD', fraction: 0, exceeded: false, ...over,
});
const budget = (window: BudgetSpec['window'], createdAt = '2026-10-01T00:00:00.000Z'): Budget => ({
  metadata: { id: 'b', slug: 'b', displayName: 'B', createdAt, updatedAt: createdAt },
  spec: { scope: {}, window, timezone: 'UTC', currency: 'USD', action: 'refuse', alertAt: [1], enabled: true, limitAmount: 30 },
});

t.test('projection: the rate so far, to the window\'s end', async (t) => {
  // A third of November gone (10 of 30 days), $12 spent: $36 by the end, the $30 limit reached on day 25.
  const now = Date.parse('2026-11-11T00:00:00.000Z');
  const p = projection(status({ spentAmount: 12, spentTokens: 1000 }), now)!;
  t.equal(p.at, '2026-12-01T00:00:00.000Z');
  t.equal(p.amount, 36);
  t.equal(p.tokens, 3000);
  t.equal(p.limitReachedAt, '2026-11-26T00:00:00.000Z');
  t.equal(projection(status({ spentAmount: 3 }), now)!.limitReachedAt, null, 'a rate that stays under the limit reaches nothing');
  t.equal(projection(status({ spentAmount: 40 }), now)!.limitReachedAt, '2026-11-11T00:00:00.000Z', 'already past: now');
  t.equal(projection(status({ resetsAt: null }), now), null, 'rolling and lifetime windows have no end to project to');
});

t.test('cumulative: buckets in time order, added up from an offset', async (t) => {
  const point = (t: string, cost: number, tokens: number) => ({ t, totals: { ...emptyTotals(), cost, input_tokens: tokens, output_tokens: 1 } });
  t.same(cumulative([point('2026-11-01T01:00:00.000Z', 0.2, 9), point('2026-11-01T00:00:00.000Z', 0.1, 4)], { amount: 1, tokens: 10 }), [
    { t: '2026-11-01T00:00:00.000Z', amount: 1.1, tokens: 15 },
    { t: '2026-11-01T01:00:00.000Z', amount: 1.3, tokens: 25 },
  ]);
});

t.test('span and bucket', async (t) => {
  const now = Date.parse('2026-11-11T00:00:00.000Z');
  t.same(burnDownSpan(budget('daily'), status({ windowStart: '2026-11-11T00:00:00.000Z', resetsAt: '2026-11-12T00:00:00.000Z' }), now).bucketSeconds, 3600, 'a day in hours');
  t.same(burnDownSpan(budget('monthly'), status({}), now), { fromMs: Date.parse('2026-11-01T00:00:00.000Z'), toMs: Date.parse('2026-12-01T00:00:00.000Z'), bucketSeconds: 21_600 }, 'a month in 6 hours');
  t.same(burnDownSpan(budget('lifetime'), status({ windowStart: '1970-01-01T00:00:00.000Z', resetsAt: null }), now),
    { fromMs: Date.parse('2026-10-01T00:00:00.000Z'), toMs: now, bucketSeconds: 21_600 }, 'lifetime: from its creation to now');
  t.equal(burnDownSpan(budget('lifetime', '2020-01-01T00:00:00.000Z'), status({ windowStart: '1970-01-01T00:00:00.000Z', resetsAt: null }), now).bucketSeconds, 86_400 * 13, 'years (2,506 days): 13-day buckets, at most ~200');
});
