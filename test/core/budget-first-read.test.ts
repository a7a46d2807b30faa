// A budget's spend before its first read of the usage log answers is unknown, not 0: a spent
// budget first seen by this instance (a restart, a window reset) must not admit requests meanwhile.
import t from 'tap';
import { BudgetGuard, type Spend } from '../../core/budgets/budget-guard.ts';
import { buildSnapshot, emptyTables, type CatalogSnapshot } from '../../core/catalog/snapshot.ts';
import { RelayError } from '../../core/errors.ts';
import type { Principal } from '../../core/hooks.ts';
import { silentLog } from '../support/observer-fixtures.ts';

const principal = { relayKey: { metadata: { id: 'k1' } }, policy: { metadata: { id: 'p1' } } } as unknown as Principal;

function budgetOf(spec: Record<string, unknown> = {}) {
  return {
    metadata: { id: 'b1', slug: 'b1', displayName: 'B1', createdAt: '2026-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: 'k1' }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 1, action: 'refuse', enabled: true, ...spec },
  };
}

function snapshotOf(budget: ReturnType<typeof budgetOf>): CatalogSnapshot {
  const tables = emptyTables();
  tables.budgets.set(budget.metadata.id, budget as never);
  return buildSnapshot(tables);
}

/** A usage log whose reads answer when the test says. */
function heldReads() {
  const reads: Array<{ resolve: (spend: Spend | null) => void; reject: (err: Error) => void }> = [];
  return {
    reads,
    readSpend: () => new Promise<Spend | null>((resolve, reject) => { reads.push({ resolve, reject }); }),
  };
}

t.test('a spent budget whose first read has not answered refuses with a 503, then with a 429 once read', async (t) => {
  const log = heldReads();
  const budget = budgetOf();
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog });
  const unknown = guard.refusal(principal, 'm');
  t.equal(unknown?.code, 'RELAY_ERR_BUDGET_UNAVAILABLE', 'not admitted as if nothing were spent');
  t.equal(unknown?.status, 503);
  t.equal(unknown?.headers?.['retry-after'], '1');
  const wait = guard.firstReads(principal, ['m']);
  t.ok(wait, 'a request has a read to wait for');
  log.reads[0].resolve({ micros: 2_000_000, tokens: 0 });
  await wait;
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED', 'spent, as the log says');
  t.equal(guard.firstReads(principal, ['m']), null, 'known now: nothing to wait for');
  t.equal(log.reads.length, 1, 'read once');
});

t.test('a first read that fails leaves the spend unknown (503), and a later request reads again', async (t) => {
  const log = heldReads();
  const budget = budgetOf();
  let now = Date.parse('2026-03-01T12:00:00Z');
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog, now: () => now });
  const wait = guard.firstReads(principal, ['m']);
  log.reads[0].reject(new Error('usage log down'));
  await wait;
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_UNAVAILABLE', 'not admitted as if nothing were spent');
  t.equal(guard.firstReads(principal, ['m']), null, 'not read again at once: the usage log is not asked on every request');
  t.equal(log.reads.length, 1);
  now += 1_000;
  const again = guard.firstReads(principal, ['m']);
  t.ok(again, 'a second later, a request reads again and waits for it');
  t.equal(log.reads.length, 2);
  log.reads[1]?.resolve({ micros: 2_000_000, tokens: 0 });
  await again;
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED', 'spent, as the log says once it answers');
});

t.test('a usage backend that answers it cannot say counts this instance\'s requests only, as before', async (t) => {
  const log = heldReads();
  const budget = budgetOf();
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog });
  const wait = guard.firstReads(principal, ['m']);
  log.reads[0].reject(new RelayError('RELAY_ERR_QUERY_UNSUPPORTED', 'the file usage backend cannot answer a scan this large'));
  await wait;
  t.equal(guard.refusal(principal, 'm'), null, 'admitted: asking again would get the same answer');
  t.equal(guard.firstReads(principal, ['m']), null);
});

t.test('a budget covering none of the request\'s models is not waited for', async (t) => {
  const log = heldReads();
  const budget = budgetOf({ scope: { modelId: 'other' } });
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog });
  t.equal(guard.firstReads(principal, ['m', null]), null);
  t.ok(guard.firstReads(principal, ['m', 'other']), 'a fallback it covers is');
});

t.test('warm starts every enabled budget\'s first read', async (t) => {
  const log = heldReads();
  const budget = budgetOf();
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog });
  guard.warm();
  t.equal(log.reads.length, 1);
});

t.test('an edit that changes what a budget counts keeps its spend until the new read answers', async (t) => {
  const log = heldReads();
  let budget = budgetOf();
  let snapshot = snapshotOf(budget);
  const guard = new BudgetGuard({ snapshot: () => snapshot, readSpend: log.readSpend, log: silentLog });
  guard.firstReads(principal, ['m']);
  log.reads[0].resolve({ micros: 2_000_000, tokens: 0 });
  await guard.freshStatus(budget as never);
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED');

  budget = budgetOf({ window: 'monthly' });
  snapshot = snapshotOf(budget);
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED', 'still spent while the month is read');
  t.equal(guard.firstReads(principal, ['m']), null, 'nothing to wait for: the old figure stands meanwhile');
  t.equal(log.reads.length, 2, 'the new window is read');
  log.reads[1].resolve({ micros: 500_000, tokens: 0 });
  await guard.freshStatus(budget as never);
  t.equal(guard.refusal(principal, 'm'), null, 'the month\'s own figure once read');
  t.equal(guard.status(budget as never).spentAmount, 0.5);
});

t.test('a window that just reset starts known, at 0: no request waits for its read (a usage log failing at midnight refuses nothing)', async (t) => {
  const log = heldReads();
  const budget = budgetOf({ window: 'daily' });
  let now = Date.parse('2026-03-01T23:59:59Z');
  const guard = new BudgetGuard({ snapshot: () => snapshotOf(budget), readSpend: log.readSpend, log: silentLog, now: () => now });
  const wait = guard.firstReads(principal, ['m']);
  log.reads[0].resolve({ micros: 2_000_000, tokens: 0 });
  await wait;
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED', 'spent today');
  now = Date.parse('2026-03-02T00:00:01Z');
  t.equal(guard.refusal(principal, 'm'), null, 'a new day: admitted');
  t.equal(guard.firstReads(principal, ['m']), null, 'without waiting');
  t.equal(log.reads.length, 2, 'while the new day is read');
});
