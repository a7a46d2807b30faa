// An outage must not log a warning on every request for as long as it lasts: a Valkey increment
// of a shared budget total that fails, and a budget alert that can be neither claimed in Valkey
// nor recorded in the database (tried again on the next request), warn once, then the same failure
// at most once a minute per budget with how many were not logged, and the first success after
// failures says so once, at info. Real parts: ValkeySpend on the real Redis (a WRONGTYPE key, then
// none), the alert store on the embedded database (its table renamed away, then back), Valkey alert
// claims behind the hanging proxy (connections refused, then accepted again), pino's own lines.
import t, { type Test } from 'tap';
import pino from 'pino';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetAlertStore } from '../../core/budgets/alert-store.ts';
import { BudgetAlerts } from '../../core/budgets/budget-alerts.ts';
import { BudgetGuard, type BudgetStatus, whatCounts } from '../../core/budgets/budget-guard.ts';
import { REPEAT_WARN_MS } from '../../core/budgets/repeat-warnings.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { ValkeyAlertClaims } from '../../core/budgets/valkey-alert-claims.ts';
import { sharedSpendKey, sharedTotalId, ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { windowAt } from '../../core/budgets/window.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import { migrate } from '../../core/db/migrate.ts';
import { openDatabase } from '../../core/db/open.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { eventually } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const BOUND_MS = 30_000;

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions() });
// Relay's clients have no offline queue: a command before the connection is up fails at once.
await waitForValkey(direct);
const prefix = `relay:test-repeat-warnings:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
});

interface Line { level: number; msg: string; budget?: string; notLogged?: number; failures?: number; err?: { message: string } | string }

/** pino writing its lines (info and up) into an array. */
function capture() {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Line); } });
  return { log, lines };
}

const budgetOf = (id: string, spec: Record<string, unknown>): Budget => ({
  metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { relayKeyId: `key-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', enabled: true, ...spec },
} as unknown as Budget);

/** A refusing lifetime budget of $10 counted in Valkey, its guard on the clock `now`, and a count of the increments answered or failed. */
async function sharedBudget(t: Test, now: () => number) {
  const id = randomBytes(8).toString('hex');
  const budget = budgetOf(id, { limitAmount: 10, action: 'refuse' });
  const tables = emptyTables();
  tables.budgets.set(id, budget);
  const snapshot = buildSnapshot(tables);
  // No usage backend loaded: the usage log cannot say, the shared total alone counts.
  const observer = createObserver({ settings: testSettings(), log: silentLog, metrics: new Registry() });
  t.teardown(() => observer.close());
  const { log, lines } = capture();
  let settled = 0;
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now, reconcileMs: 3_600_000, readSpend: (filter) => budgetSpendFromLog(observer, filter), log,
    shared: new ValkeySpend(direct, prefix), onCounted: () => { settled++; },
  });
  await guard.freshStatus(budget);
  const sharedKey = sharedSpendKey(prefix, sharedTotalId(id, whatCounts(budget.spec)), windowAt(budget.spec, now()).startMs);
  /** Records `n` requests of $0.10 and waits until Valkey answered or failed each increment. */
  const spend = async (n: number) => {
    const until = settled + n;
    for (let i = 0; i < n; i++) guard.record(usageEvent({ relay_key_id: `key-${id}`, cost: 0.1 }));
    await eventually(() => settled >= until, BOUND_MS, 10);
  };
  // Lines about the increment only: a shared read may fail on the same key too, and warns by its own limiter.
  const ofIncrement = (level: number) => lines.filter((l) => l.level === level && l.budget === budget.metadata.slug && l.msg.startsWith('adding to'));
  return { guard, budget, sharedKey, spend, warned: () => ofIncrement(40), told: () => ofIncrement(30) };
}

t.test('Valkey refuses a budget\'s increments (WRONGTYPE): one warning, then one a minute, then one line when it answers', async (t) => {
  let now = Date.now();
  const { guard, budget, sharedKey, spend, warned, told } = await sharedBudget(t, () => now);
  await direct.set(sharedKey, 'not a hash');

  const failed = "adding to a budget's shared spend in Valkey failed";
  await spend(5);
  t.same(warned().map((l) => l.msg), [failed], 'five requests, one warning');
  t.match((warned()[0]?.err as { message: string } | undefined)?.message, /WRONGTYPE/, 'with Valkey\'s reason');
  t.equal(guard.status(budget).spentAmount, 0.5, 'each refused increment still counted here');

  now += REPEAT_WARN_MS;
  await spend(1);
  t.same(warned().map((l) => l.msg), [failed, `${failed} (4 failures of this increment not logged since its last warning)`], 'a minute later, the same failure warns again, counting the ones not logged');
  t.equal(warned()[1]?.notLogged, 4);

  await direct.del(sharedKey);
  await spend(2);
  t.same(told().map((l) => [l.msg, l.failures]), [["adding to a budget's shared spend in Valkey answers again (after 6 failures)", 6]], 'Valkey answers: said once, at info');
  t.equal(warned().length, 2, 'and no more warnings');
  t.equal(await direct.hget(sharedKey, 'micros'), '200000', 'Valkey counts the two it acknowledged');
  t.equal(guard.status(budget).spentAmount, 0.8, 'and this instance all eight');
});

t.test('an alert that can be neither claimed in Valkey nor recorded, on every request: one warning each, then one a minute, then one line each when they work', async (t) => {
  const db = await openDatabase({ dataDir: null });
  await migrate(db);
  const proxy = await startHangingProxy(6379);
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(), enableOfflineQueue: false, retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  t.teardown(async () => {
    redis.disconnect();
    await proxy.close();
    await db.close();
  });
  const answers = async () => (await redis.ping().catch(() => null)) === 'PONG';
  await eventually(answers, BOUND_MS, 20);
  const id = randomUUID();
  const budget = budgetOf(id, { limitAmount: 10, action: 'alert', alertAt: [0.5] });
  let clock = Date.now();
  const { log, lines } = capture();
  const alerts = new BudgetAlerts({ store: new BudgetAlertStore(db), claims: new ValkeyAlertClaims(redis, prefix), log, now: () => clock });
  const status: BudgetStatus = {
    budgetId: id, windowStart: new Date(0).toISOString(), resetsAt: null, spentAmount: 6, spentTokens: 0, limitAmount: 10, limitTokens: null,
    remainingAmount: 4, remainingTokens: null, currency: 'USD', fraction: 0.6, exceeded: false,
  };
  /** A request's spend past the alert's fraction, its alert tried until over. */
  const request = async () => {
    alerts.check(budget, status);
    await alerts.idle();
  };
  const ofBudget = (level: number) => lines.filter((l) => l.level === level && l.budget === budget.metadata.slug).map((l) => l.msg);

  await proxy.refuse();
  // Once the client knows its connection is gone, every claim fails the same way (no offline queue).
  await eventually(async () => /writeable/.test(await redis.ping().then(() => '', (err: Error) => err.message)), BOUND_MS, 20);
  await db.query('ALTER TABLE budget_alerts RENAME TO budget_alerts_away');
  const claimFailed = 'claiming a budget alert in Valkey failed; the database decides alone';
  const recordFailed = 'a budget alert could not be recorded; it is tried again on the next request';
  for (let i = 0; i < 5; i++) await request();
  t.same(ofBudget(40), [claimFailed, recordFailed], 'five requests, one warning of each');

  clock += REPEAT_WARN_MS;
  await request();
  t.same(ofBudget(40).slice(2), [
    `${claimFailed} (4 failures of this alert's claim not logged since its last warning)`,
    `${recordFailed} (4 failures of this alert's recording not logged since its last warning)`,
  ], 'a minute later, each warns again, counting the ones not logged');

  await db.query('ALTER TABLE budget_alerts_away RENAME TO budget_alerts');
  await proxy.reopen();
  await eventually(answers, BOUND_MS, 20);
  await request();
  t.same(ofBudget(30).sort(), [
    'claiming a budget alert in Valkey answers again (after 6 failures)',
    'recording a budget alert answers again (after 6 failures)',
  ], 'both work again: said once each, at info');
  t.equal(ofBudget(40).length, 4, 'and no more warnings');
  t.equal((await alerts.list(id, 10)).length, 1, 'the alert is recorded once');
});
