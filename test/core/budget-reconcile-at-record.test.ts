// A request's end can start a budget's reconcile: the first read of a budget that only alerts (no
// request waited for it), or a periodic one that fell due. The request is already queued for the
// usage log then, so the read counts it: the budget must not count it a second time as its own.
// Run on a real usage log (log-file), without and with the shared total in Valkey.
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const REDIS_URL = process.env.RELAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RECONCILE_MS = 60_000;

const budgetOf = (action: 'alert' | 'refuse') => ({
  metadata: { id: `b-${action}`, slug: `b-${action}`, displayName: `B ${action}`, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
  spec: { window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 20, action, enabled: true },
});

/** A budget guard counting from a real log-file usage log, through a real observer; Valkey's shared total when given. */
async function guardOn(t: Test, budget: ReturnType<typeof budgetOf>, shared?: ValkeySpend) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-budget-at-record-'));
  const backend = new FileUsageBackend({ dir, maxFileBytes: 32 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 512 << 20, orderSkewMs: 5000 });
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: backend.id } }), log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  observer.addUsageBackend(backend);
  t.teardown(async () => {
    await observer.close();
    await rm(dir, { recursive: true, force: true });
  });
  const tables = emptyTables();
  tables.budgets.set(budget.metadata.id, budget as never);
  const snapshot = buildSnapshot(tables);
  const clock = { now: Date.now() };
  const guard = new BudgetGuard({ snapshot: () => snapshot, now: () => clock.now, reconcileMs: RECONCILE_MS, log: silentLog,
    readSpend: (filter) => budgetSpendFromLog(observer, filter), ...(shared ? { shared } : {}) });
  observer.addRecorder('budgets', (event) => guard.record(event));
  /** Serves one $0.065 request (65 tokens) and waits until the budget's reads it started have answered. */
  const serve = async () => {
    observer.record(usageEvent({ cost: 0.065, currency: 'USD', input_tokens: 50, output_tokens: 15, started_at: new Date(clock.now).toISOString() }), null);
    await new Promise((resolve) => setImmediate(resolve)); // the recorders run after the tick that recorded
    return guard.freshStatus(budget as never);
  };
  return { guard, clock, serve };
}

async function countedOnce(t: Test, shared?: ValkeySpend): Promise<void> {
  t.test('an alerting budget first read at its first request\'s end counts that request once', async (t) => {
    const { serve } = await guardOn(t, budgetOf('alert'), shared);
    const first = await serve();
    t.equal(first.spentAmount, 0.065, 'one request\'s cost, not two');
    t.equal(first.spentTokens, 65);
    const second = await serve();
    t.equal(second.spentAmount, 0.13, 'the next request adds its own');
  });

  t.test('a reconcile falling due at a request\'s end counts that request once', async (t) => {
    const budget = budgetOf('refuse');
    const { guard, clock, serve } = await guardOn(t, budget, shared);
    t.equal((await guard.freshStatus(budget as never)).spentAmount, 0, 'the first read: an empty log');
    t.equal((await serve()).spentAmount, 0.065);
    clock.now += RECONCILE_MS;
    const due = await serve();
    t.equal(due.spentAmount, 0.13, 'two requests\' cost, not three');
    t.equal(due.spentTokens, 130);
    clock.now += RECONCILE_MS;
    guard.status(budget as never);
    t.equal((await guard.freshStatus(budget as never)).spentAmount, 0.13, 'the next reconcile agrees');
  });
}

t.test('without Valkey', (t) => countedOnce(t));

t.test('with the shared total in Valkey', async (t) => {
  const redis = new Redis(REDIS_URL, valkeyClientOptions());
  try {
    await waitForValkey(redis);
  } catch {
    redis.disconnect();
    t.plan(0, `no Valkey at ${REDIS_URL} (set RELAY_TEST_REDIS_URL)`);
    return;
  }
  const prefix = `relay-test:${randomBytes(4).toString('hex')}:budget`;
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  await countedOnce(t, new ValkeySpend(redis, prefix));
});
