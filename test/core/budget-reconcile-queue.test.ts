// A budget's reconcile reads the usage log: spend this instance counted but still queued for the
// log (its batch not yet written) must survive it, not vanish until the next reconcile.
import t from 'tap';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { QUEUE_WAIT_MS, budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageBackend } from '../../core/observer/types.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

/** A usage log whose writes wait until released, and whose summary adds up what it holds. */
function heldLog(): UsageBackend & { release(): void } {
  const rows: UsageEvent[] = [];
  let open!: () => void;
  let gate = new Promise<void>((resolve) => { open = resolve; });
  return {
    id: 'held',
    async write(batch) {
      await gate;
      rows.push(...batch);
    },
    async summary() {
      const cost = rows.reduce((a, e) => a + (e.cost ?? 0), 0);
      const input = rows.reduce((a, e) => a + e.input_tokens, 0);
      const output = rows.reduce((a, e) => a + e.output_tokens, 0);
      return { totals: { requests: rows.length, input_tokens: input, output_tokens: output, cost } } as never;
    },
    release() {
      open();
      gate = Promise.resolve();
    },
  };
}

const budget = {
  metadata: { id: 'b1', slug: 'b1', displayName: 'B1', createdAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { relayKeyId: 'key-1' }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, action: 'refuse', enabled: true },
};
const tables = emptyTables();
tables.budgets.set('b1', budget as never);
const snapshot = buildSnapshot(tables);

t.test('spend still queued for the usage log survives a reconcile', async (t) => {
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'held' } }), log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  const log = heldLog();
  observer.addUsageBackend(log);
  let now = Date.now();
  const guard = new BudgetGuard({ snapshot: () => snapshot, now: () => now, reconcileMs: 60_000, log: silentLog,
    readSpend: (filter) => budgetSpendFromLog(observer, filter) });
  observer.addRecorder('budgets', (event) => guard.record(event));
  t.teardown(() => observer.close());

  await guard.freshStatus(budget as never); // the first read: an empty log
  for (let i = 0; i < 4; i++) observer.record(usageEvent({ cost: 2.5, started_at: new Date(now).toISOString() }), null);
  await new Promise((resolve) => setImmediate(resolve)); // the recorders run
  t.equal(guard.status(budget as never).spentAmount, 10, 'four $2.50 requests counted: $10 of $10');

  // The periodic reconcile starts while the four are still queued; the log writes them later.
  now += 60_000;
  guard.status(budget as never);
  await new Promise((resolve) => setTimeout(resolve, 20));
  log.release();
  const after = await guard.freshStatus(budget as never);
  t.equal(after.spentAmount, 10, 'the four still count once the reconcile has read the log');
  t.equal(guard.status(budget as never).exceeded, true, 'and the budget is still spent');
  await observer.flush();
  t.equal(guard.status(budget as never).spentAmount, 10, 'counted once, not twice, once written');
});

t.test('a usage log that never finishes its writes does not hold the read: it answers after QUEUE_WAIT_MS', async (t) => {
  const summary = { totals: { requests: 1, input_tokens: 3, output_tokens: 4, cost: 0.25 } };
  const observer = { usageWritten: () => new Promise<void>(() => {}), usageBackend: () => ({ id: 'stuck', write: async () => {}, summary: async () => summary }) };
  const started = Date.now();
  t.same(await budgetSpendFromLog(observer as never, { from: new Date(0) }), { micros: 250_000, tokens: 7, partial: true }, 'marked partial: it may lack the queued spend');
  t.ok(Date.now() - started >= QUEUE_WAIT_MS - 50, 'after waiting its bound for the queue');
});
