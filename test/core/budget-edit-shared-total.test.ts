// A budget counted in Valkey keeps one shared total per version of what it counts (scope, window,
// time zone, currency): after an edit of them the budget counts the new version's spend, not the
// old scope's total nor its units; an instance still holding the old version (the catalog's
// propagation delay) adds to the old total, not to the new one; an edit of anything else keeps the
// total. A rolling upgrade's older instances (the key without the digest) still count, unless the
// budget was edited in the window. Real parts: BudgetGuard and ValkeySpend on the real Redis, the
// catalog snapshot builder; no usage backend loaded (the usage log cannot say), so the shared
// total alone counts and nothing else can hide what it holds.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Budget, BudgetSpec } from '../../core/catalog/kinds.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { eventually } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const BOUND_MS = 30_000;
const CREATED = '2026-01-01T00:00:00.000Z';

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions() });
// Relay's clients have no offline queue: a command before the connection is up fails at once.
await waitForValkey(direct);
const prefix = `relay:test-budget-edit:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
});

const budgetOf = (id: string, spec: Partial<BudgetSpec>, updatedAt = CREATED): Budget => ({
  metadata: { id, slug: `team-${id}`, displayName: id, createdAt: CREATED, updatedAt },
  spec: { scope: { relayKeyId: `key-a-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 100, action: 'refuse', enabled: true, alertAt: [], ...spec },
} as unknown as Budget);

/** A guard (one Relay instance) over the snapshot `current()` holds, counting in Valkey; no usage backend. */
function instance(t: Test, current: () => CatalogSnapshot) {
  const observer = createObserver({ settings: testSettings(), log: silentLog, metrics: new Registry() });
  t.teardown(() => observer.close());
  let settled = 0;
  const guard = new BudgetGuard({
    snapshot: current, reconcileMs: 3_600_000, readSpend: (filter) => budgetSpendFromLog(observer, filter), log: silentLog,
    shared: new ValkeySpend(direct, prefix), onCounted: () => { settled++; },
  });
  /** Records the events and waits until Valkey answered (or failed) each increment. */
  const record = async (...events: ReturnType<typeof usageEvent>[]) => {
    const until = settled + events.length;
    for (const e of events) guard.record(e);
    await eventually(() => settled >= until, BOUND_MS, 10);
  };
  return { guard, record };
}

/** A catalog whose one budget an admin edits: `edit` puts the new version in a new snapshot. */
function catalog(budget: Budget) {
  const tables = emptyTables();
  tables.budgets.set(budget.metadata.id, budget);
  let snapshot = buildSnapshot(tables);
  return {
    current: () => snapshot,
    edit: (next: Budget) => {
      tables.budgets.set(next.metadata.id, next);
      snapshot = buildSnapshot(tables);
    },
  };
}

/** The spend an instance reads once its reads under way answered (a shared read is due every 500 ms). */
async function spentOn(guard: BudgetGuard, budget: Budget, expected: number): Promise<number> {
  await guard.freshStatus(budget);
  await eventually(() => guard.status(budget).spentAmount === expected, 3_000, 20).catch(() => undefined);
  return guard.status(budget).spentAmount;
}

t.test('a scope edit counts the new scope\'s spend; an instance still on the old scope adds to the old total only', async (t) => {
  const id = randomBytes(8).toString('hex');
  const scopeA = budgetOf(id, {});
  const scopeB = budgetOf(id, { scope: { relayKeyId: `key-b-${id}` } }, new Date().toISOString());
  const edited = catalog(scopeA);
  const lagging = catalog(scopeA);
  const one = instance(t, edited.current);
  const two = instance(t, lagging.current);
  await one.guard.freshStatus(scopeA);
  await two.guard.freshStatus(scopeA);
  await one.record(usageEvent({ relay_key_id: `key-a-${id}`, cost: 0.4 }));
  t.equal(await spentOn(two.guard, scopeA, 0.4), 0.4, 'scope A\'s spend is shared');

  // Instance one has the edit, instance two not yet.
  edited.edit(scopeB);
  t.equal(await spentOn(one.guard, scopeB, 0), 0, 'scope B has spent nothing: A\'s $0.40 is not inherited');
  await two.record(usageEvent({ relay_key_id: `key-a-${id}`, cost: 0.25 }));
  t.equal(two.guard.status(scopeA).spentAmount, 0.65, 'the lagging instance counts A\'s spend on A\'s total');
  await one.record(usageEvent({ relay_key_id: `key-b-${id}`, cost: 0.1 }));
  t.equal(await spentOn(one.guard, scopeB, 0.1), 0.1, 'B counts B\'s request, not the lagging instance\'s A request');

  // The edit reaches instance two: it reads B's total.
  lagging.edit(scopeB);
  t.equal(await spentOn(two.guard, scopeB, 0.1), 0.1, 'the other instance reads B\'s spend only');
});

t.test('a currency edit starts from the new currency\'s spend: no figure of another unit', async (t) => {
  const id = randomBytes(8).toString('hex');
  const usd = budgetOf(id, {});
  const eur = budgetOf(id, { currency: 'EUR' }, new Date().toISOString());
  const cat = catalog(usd);
  const one = instance(t, cat.current);
  await one.guard.freshStatus(usd);
  await one.record(usageEvent({ relay_key_id: `key-a-${id}`, cost: 0.3, currency: 'USD' }));
  t.equal(await spentOn(one.guard, usd, 0.3), 0.3);
  cat.edit(eur);
  t.equal(await spentOn(one.guard, eur, 0), 0, 'no USD counted as EUR');
  await one.record(usageEvent({ relay_key_id: `key-a-${id}`, cost: 0.2, currency: 'EUR' }));
  t.equal(await spentOn(one.guard, eur, 0.2), 0.2, 'the EUR request counts');
});

t.test('an edit of the name or the limit keeps the shared total', async (t) => {
  const id = randomBytes(8).toString('hex');
  const before = budgetOf(id, {});
  const after = { ...budgetOf(id, { limitAmount: 50 }, new Date().toISOString()), metadata: { ...before.metadata, displayName: 'renamed', updatedAt: new Date().toISOString() } } as Budget;
  const cat = catalog(before);
  const one = instance(t, cat.current);
  // A second instance that starts after the edit: only the shared total can tell it the spend.
  await one.guard.freshStatus(before);
  await one.record(usageEvent({ relay_key_id: `key-a-${id}`, cost: 0.3 }));
  cat.edit(after);
  const two = instance(t, cat.current);
  t.equal(await spentOn(one.guard, after, 0.3), 0.3, 'the editing instance keeps $0.30');
  t.equal(await spentOn(two.guard, after, 0.3), 0.3, 'an instance new to the budget reads $0.30 from Valkey');
});

t.test('rolling upgrade: the total of instances from before the digest counts, unless the budget was edited in the window', async (t) => {
  // An older instance's total: the key without the digest.
  const unedited = randomBytes(8).toString('hex');
  const edited = randomBytes(8).toString('hex');
  for (const id of [unedited, edited]) await direct.hset(`${prefix}:${id}:0`, { micros: 700_000, tokens: 50 });
  const a = catalog(budgetOf(unedited, {}));
  const one = instance(t, a.current);
  t.equal(await spentOn(one.guard, budgetOf(unedited, {}), 0.7), 0.7, 'unedited since the window began: the older instances\' $0.70 counts');
  const bBudget = budgetOf(edited, { scope: { relayKeyId: `key-b-${edited}` } }, new Date().toISOString());
  const b = catalog(bBudget);
  const two = instance(t, b.current);
  t.equal(await spentOn(two.guard, bBudget, 0), 0, 'edited in the window: the older total may count another scope, and is not taken');
});
