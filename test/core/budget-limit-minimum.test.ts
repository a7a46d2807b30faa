// A budget's money limit is at least one millionth (what Relay counts spend in): a smaller one
// rounds to 0, and its spent fraction would be infinite (null in JSON, +Inf in /metrics).
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { BudgetSpec } from '../../core/catalog/kinds.ts';
import { firstProblem } from '../../core/http/validate.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { silentLog } from '../support/observer-fixtures.ts';

const spec = (limitAmount: number) => ({ scope: {}, window: 'daily', timezone: 'UTC', currency: 'USD', limitAmount, action: 'refuse' });

/** The problem the catalog reports for a budget spec (as on POST /api/budgets), or null. */
const problem = (limitAmount: number) => firstProblem(BudgetSpec, Value.Default(BudgetSpec, spec(limitAmount)), '/spec');

t.test('limitAmount below one millionth is refused, one millionth is accepted', async (t) => {
  t.equal(problem(1), null, 'a dollar');
  t.equal(problem(0.000001), null, 'one millionth');
  t.match(problem(1e-320), { pointer: '/spec/limitAmount' }, '1e-320 is a 400 naming limitAmount');
  t.match(problem(0), { pointer: '/spec/limitAmount' }, '0 too');
});

t.test('a tiny limit stored before the minimum still gives a finite fraction', async (t) => {
  const budget = { metadata: { id: 'b1', slug: 'b1', displayName: 'B1', createdAt: '2026-01-01T00:00:00Z' }, spec: { ...spec(1e-320), enabled: true } };
  const tables = emptyTables();
  tables.budgets.set('b1', budget as never);
  const snapshot = buildSnapshot(tables);
  const guard = new BudgetGuard({ snapshot: () => snapshot, readSpend: async () => ({ micros: 5, tokens: 0 }), log: silentLog });
  const status = await guard.freshStatus(budget as never);
  t.ok(Number.isFinite(status.fraction), `fraction ${status.fraction}`);
  t.equal(JSON.parse(JSON.stringify(status)).fraction, status.fraction, 'serialized as the number it is');
  t.equal(status.exceeded, true, 'spent');
});
