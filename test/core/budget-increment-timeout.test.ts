// An increment of a budget's shared total that timed out is counted by this instance as failed
// (it keeps it in its own spend until the usage log has it): the Valkey client must not send it
// again once the connection is back, or Valkey counts it too and this instance counts it twice.
// Real parts: ValkeySpend on the real Redis behind the hanging proxy (gone silent, its connection
// timed out, then answering again), the Valkey client options Relay uses, the budget guard.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard, SHARED_READ_MS, whatCounts } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { sharedSpendKey, sharedTotalId, ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { windowAt } from '../../core/budgets/window.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { eventually } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const BOUND_MS = 30_000;
// Valkey's command deadline: short, so the increment times out while the proxy is silent.
const VALKEY_TIMEOUT_MS = 500;

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions() });
await waitForValkey(direct); // no offline queue: a command before the connection is up fails at once
const prefix = `relay:test-increment-timeout:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
});

t.test('an increment that timed out is not sent again once Valkey answers: counted once, not twice', async (t) => {
  const proxy = await startHangingProxy(6379);
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(VALKEY_TIMEOUT_MS) });
  redis.on('error', () => undefined);
  t.teardown(async () => {
    redis.disconnect();
    await proxy.close();
  });
  const answers = async () => (await redis.ping().catch(() => null)) === 'PONG';
  await eventually(answers, BOUND_MS, 20);

  const id = randomBytes(8).toString('hex');
  const budget = {
    metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: `key-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, action: 'refuse', enabled: true },
  } as unknown as Budget;
  const tables = emptyTables();
  tables.budgets.set(id, budget);
  const snapshot = buildSnapshot(tables);
  // No usage backend: the shared total alone counts (a reconcile cannot fold this instance's spend in).
  const observer = createObserver({ settings: testSettings(), log: silentLog, metrics: new Registry() });
  t.teardown(() => observer.close());
  let now = Date.now();
  let settled = 0;
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now: () => now, reconcileMs: 3_600_000, readSpend: (filter) => budgetSpendFromLog(observer, filter),
    log: silentLog, shared: new ValkeySpend(redis, prefix), onCounted: () => { settled++; },
  });
  await guard.freshStatus(budget);
  const sharedKey = sharedSpendKey(prefix, sharedTotalId(id, whatCounts(budget.spec)), windowAt(budget.spec, now).startMs);
  const spend = async () => {
    const until = settled + 1;
    guard.record(usageEvent({ relay_key_id: `key-${id}`, cost: 0.1 }));
    await eventually(() => settled >= until, BOUND_MS, 10);
  };

  await spend();
  t.equal(await direct.hget(sharedKey, 'micros'), '100000', 'the first increment is acknowledged');

  // Valkey goes silent: the second increment times out, and this instance counts it as failed.
  proxy.stall();
  await spend();
  t.equal(guard.status(budget).spentAmount, 0.2, 'both counted here');

  // Valkey answers again; the client's connection (closed as silent) is opened anew.
  proxy.answer();
  await eventually(answers, BOUND_MS, 20);
  t.equal(await direct.hget(sharedKey, 'micros'), '100000', 'Valkey did not get the increment that timed out');

  // The next read of the shared total merges Valkey's figure with this instance's own.
  now += SHARED_READ_MS;
  guard.status(budget);
  // The read went out before this ping on the same connection: answered first.
  await redis.ping();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(guard.status(budget).spentAmount, 0.2, '$0.20 spent, not $0.30');
});
