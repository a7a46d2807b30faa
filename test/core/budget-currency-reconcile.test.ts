// A budget caps spending in its currency: a request priced in another currency adds its tokens
// but no money (BudgetGuard.record). Its reconcile reads the spend from the usage log, which must
// count the same: the cost in the budget's currency only, the tokens in every currency. Run against
// real usage backends (log-file, log-postgres when Postgres answers).
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { openDatabase } from '../../core/db/open.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageBackend } from '../../core/observer/types.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const PG_URL = process.env.RELAY_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

const budget = {
  metadata: { id: 'b-usd', slug: 'team-usd', displayName: 'Team USD', createdAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { relayKeyId: 'key-1' }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, limitTokens: 100_000, action: 'refuse', enabled: true },
};
const tables = emptyTables();
tables.budgets.set(budget.metadata.id, budget as never);
const snapshot = buildSnapshot(tables);

async function postgresReachable(): Promise<boolean> {
  const db = poolDatabase(PG_URL, 1);
  try {
    await db.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await db.close();
  }
}

async function usdBudgetOverEurSpend(t: Test, backend: UsageBackend): Promise<void> {
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: backend.id } }), log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  observer.addUsageBackend(backend);
  t.teardown(() => observer.close());
  let now = Date.now();
  const guard = new BudgetGuard({ snapshot: () => snapshot, now: () => now, reconcileMs: 60_000, log: silentLog,
    readSpend: (filter) => budgetSpendFromLog(observer, filter) });
  observer.addRecorder('budgets', (event) => guard.record(event));

  // Spent before this instance started (another instance's requests): $1.50 and €4, and one unpriced.
  const at = new Date(now - 60_000).toISOString();
  await backend.write([
    usageEvent({ relay_key_id: 'key-1', cost: 1.5, currency: 'USD', input_tokens: 100, output_tokens: 20, started_at: at }),
    usageEvent({ relay_key_id: 'key-1', cost: 4, currency: 'EUR', input_tokens: 300, output_tokens: 30, started_at: at }),
    usageEvent({ relay_key_id: 'key-1', cost: null, currency: null, input_tokens: 50, output_tokens: 5, started_at: at }),
    usageEvent({ relay_key_id: 'key-2', cost: 7, currency: 'USD', input_tokens: 1000, output_tokens: 100, started_at: at }),
  ]);
  const first = await guard.freshStatus(budget as never);
  t.equal(first.spentAmount, 1.5, 'the first read: the USD spend only, not the €4');
  t.equal(first.spentTokens, 505, 'and the tokens of every request in scope, in any currency or none');

  // This instance serves $2 and €3 more: counted locally as $2 and their tokens.
  const later = new Date(now).toISOString();
  observer.record(usageEvent({ relay_key_id: 'key-1', cost: 2, currency: 'USD', input_tokens: 10, output_tokens: 1, started_at: later }), null);
  observer.record(usageEvent({ relay_key_id: 'key-1', cost: 3, currency: 'EUR', input_tokens: 20, output_tokens: 2, started_at: later }), null);
  await observer.flush();
  const counted = guard.status(budget as never);
  t.equal(counted.spentAmount, 3.5, 'counted locally: $1.50 + $2');
  t.equal(counted.spentTokens, 538, 'counted locally: every request\'s tokens');

  // The periodic reconcile reads the log again: it agrees with the local count.
  now += 60_000;
  guard.status(budget as never);
  const reconciled = await guard.freshStatus(budget as never);
  t.equal(reconciled.spentAmount, 3.5, 'after a reconcile: still $3.50, the €7 not added to the USD budget');
  t.equal(reconciled.spentTokens, 538, 'after a reconcile: the tokens as counted locally');
  t.equal(reconciled.exceeded, false, 'and the $10 budget is not spent');
  t.equal(guard.refusal({ relayKey: { metadata: { id: 'key-1' } }, policy: { metadata: { id: 'p1' } } } as never, 'm'), null, 'its requests are not refused');
}

t.test('log-file: a USD budget reads only the USD spend from the log', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-budget-currency-'));
  const backend = new FileUsageBackend({ dir, maxFileBytes: 32 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 512 << 20, orderSkewMs: 5000 });
  t.teardown(async () => { await backend.close(); await rm(dir, { recursive: true, force: true }); });
  await usdBudgetOverEurSpend(t, backend);
});

t.test('log-postgres: a USD budget reads only the USD spend from the log', async (t) => {
  if (!(await postgresReachable())) { t.plan(0, `no Postgres at ${PG_URL} (set RELAY_TEST_DATABASE_URL)`); return; }
  const db = await openDatabase({ url: PG_URL });
  const table = `usage_test_${randomBytes(4).toString('hex')}`;
  t.teardown(async () => {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
    await db.close();
  });
  await usdBudgetOverEurSpend(t, new PostgresUsageBackend({ db, table }));
});
