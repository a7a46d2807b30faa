// A budget caps spending in its currency: a request priced in another currency adds its tokens
// but no money (BudgetGuard.record). Its reconcile reads the spend from the usage log, which must
// count the same: the cost in the budget's currency only, the tokens in every currency, both from
// one summary grouped by currency (spend-from-log.ts). Run against real usage backends (log-file,
// log-postgres on Postgres and PGlite, log-clickhouse on chdb, log-valkey).
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { openDatabase } from '../../core/db/open.ts';
import { eventually } from '../../core/testing.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { SummaryQuery, UsageBackend } from '../../core/observer/types.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { ClickHouseUsageBackend } from '../../plugins/log-clickhouse/clickhouse-usage-backend.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { ValkeyUsageBackend } from '../../plugins/log-valkey/valkey-usage-backend.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { ensureClickHouse } from '../support/clickhouse.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const PG_URL = process.env.RELAY_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.RELAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const budget = {
  metadata: { id: 'b-usd', slug: 'team-usd', displayName: 'Team USD', createdAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { relayKeyId: 'key-1' }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, limitTokens: 100_000, action: 'refuse', enabled: true },
};
// A budget in the currency fewer of its requests were priced in (its group is not the largest).
const eurBudget = {
  metadata: { id: 'b-eur', slug: 'team-eur', displayName: 'Team EUR', createdAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { policyId: 'pol-1' }, window: 'lifetime', timezone: 'UTC', currency: 'EUR', limitAmount: 10, limitTokens: 100_000, action: 'refuse', enabled: true },
};
// One whose currency none of its requests was priced in.
const jpyBudget = {
  metadata: { id: 'b-jpy', slug: 'team-jpy', displayName: 'Team JPY', createdAt: '2026-01-01T00:00:00Z' },
  spec: { ...eurBudget.spec, currency: 'JPY', limitAmount: 1000 },
};
const tables = emptyTables();
tables.budgets.set(budget.metadata.id, budget as never);
const snapshot = buildSnapshot(tables);
const byCurrencyTables = emptyTables();
for (const b of [eurBudget, jpyBudget]) byCurrencyTables.budgets.set(b.metadata.id, b as never);
const byCurrencySnapshot = buildSnapshot(byCurrencyTables);

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
  // Recorders run after the tick that recorded (observer.ts): waited for, not assumed done by the flush.
  await eventually(() => guard.status(budget as never).spentTokens !== first.spentTokens, 30_000).catch(() => undefined);
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

/**
 * The usage log's summaries asked, as the backend got them: a real backend, its summary counted.
 * (The count pins the single grouped query; every other assertion holds with two summaries as well.)
 */
function countingSummaries(backend: UsageBackend): { backend: UsageBackend; asked: SummaryQuery[] } {
  const asked: SummaryQuery[] = [];
  return {
    asked,
    backend: {
      id: backend.id,
      write: (events, options) => backend.write(events, options),
      summary: (query) => {
        asked.push(query);
        return backend.summary!(query);
      },
    },
  };
}

async function costFromItsCurrencysGroup(t: Test, real: UsageBackend): Promise<void> {
  const { backend, asked } = countingSummaries(real);
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: backend.id } }), log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  observer.addUsageBackend(backend);
  t.teardown(() => observer.close());
  const guard = new BudgetGuard({ snapshot: () => byCurrencySnapshot, reconcileMs: 3_600_000, log: silentLog,
    readSpend: (filter) => budgetSpendFromLog(observer, filter) });

  // The policy's requests: three priced in USD ($9), one in EUR (€2), two unpriced; another policy's in EUR.
  const at = new Date(Date.now() - 60_000).toISOString();
  await backend.write([
    ...[1, 2, 3].map((i) => usageEvent({ policy_id: 'pol-1', cost: 3, currency: 'USD', input_tokens: 100 * i, output_tokens: 10, started_at: at })),
    usageEvent({ policy_id: 'pol-1', cost: 2, currency: 'EUR', input_tokens: 40, output_tokens: 4, started_at: at }),
    ...[1, 2].map(() => usageEvent({ policy_id: 'pol-1', cost: null, currency: null, input_tokens: 7, output_tokens: 1, started_at: at })),
    usageEvent({ policy_id: 'pol-2', cost: 5, currency: 'EUR', input_tokens: 1000, output_tokens: 100, started_at: at }),
  ]);
  const everyToken = 600 + 30 + 44 + 16;

  // Until its read answered (freshStatus waits a bounded time), a budget reads no tokens.
  const read = async (b: typeof eurBudget) => {
    await eventually(async () => (await guard.freshStatus(b as never)).spentTokens > 0, 30_000);
    return guard.status(b as never);
  };
  const eur = await read(eurBudget);
  t.equal(eur.spentAmount, 2, 'EUR budget: the €2 of its EUR group, not the $9 of the larger USD group nor the overall $9 + €2');
  t.equal(eur.spentTokens, everyToken, 'EUR budget: the tokens of every currency and the unpriced, not its group\'s');
  const jpy = await read(jpyBudget);
  t.equal(jpy.spentAmount, 0, 'JPY budget: no group in its currency, no money');
  t.equal(jpy.spentTokens, everyToken, 'JPY budget: still every request\'s tokens');

  t.equal(asked.length, 2, 'one summary per budget\'s read');
  t.same(asked.map((q) => [q.groupBy, q.currency, q.policyId]), [['currency', undefined, 'pol-1'], ['currency', undefined, 'pol-1']],
    'grouped by currency over the scope, not filtered by it');
}

/** The real usage backends this runs against; each gives a backend and its cleanup, or a reason to skip. */
const BACKENDS: Record<string, () => Promise<{ backend: UsageBackend; cleanup: () => Promise<void> } | { skip: string }>> = {
  'log-file': async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-budget-currency-'));
    const backend = new FileUsageBackend({ dir, maxFileBytes: 32 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 512 << 20, orderSkewMs: 5000 });
    return { backend, cleanup: async () => { await backend.close(); await rm(dir, { recursive: true, force: true }); } };
  },
  'log-postgres': async () => {
    if (!(await postgresReachable())) return { skip: `no Postgres at ${PG_URL} (set RELAY_TEST_DATABASE_URL)` };
    const db = await openDatabase({ url: PG_URL });
    const table = `usage_test_${randomBytes(4).toString('hex')}`;
    return {
      backend: new PostgresUsageBackend({ db, table }),
      cleanup: async () => {
        await db.query(`DROP TABLE IF EXISTS ${table}`);
        await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
        await db.close();
      },
    };
  },
  'log-postgres on PGlite': async () => {
    const db = await openDatabase({ dataDir: null });
    return { backend: new PostgresUsageBackend({ db, table: 'relay_usage_events' }), cleanup: () => db.close() };
  },
  'log-clickhouse': async () => {
    const clickhouse = await ensureClickHouse();
    if ('skip' in clickhouse) return clickhouse;
    const table = `usage_test_${randomBytes(4).toString('hex')}`;
    return {
      backend: new ClickHouseUsageBackend({ client: clickhouse.client, table, ttlDays: 30, ownsClient: false }),
      cleanup: async () => { await clickhouse.client.command({ query: `DROP TABLE IF EXISTS ${table}` }); },
    };
  },
  'log-valkey': async () => {
    const redis = new Redis(REDIS_URL, valkeyClientOptions());
    try {
      await waitForValkey(redis);
    } catch {
      redis.disconnect();
      return { skip: `no Valkey at ${REDIS_URL} (set RELAY_TEST_REDIS_URL)` };
    }
    const keyPrefix = `relay-test:${randomBytes(4).toString('hex')}:`;
    return {
      backend: new ValkeyUsageBackend({ redis, keyPrefix, maxEvents: 10_000, ttlSeconds: 86_400 }),
      cleanup: async () => {
        const keys = await redis.keys(`${keyPrefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      },
    };
  },
};

for (const [name, open] of Object.entries(BACKENDS)) {
  const run = (scenario: (t: Test, backend: UsageBackend) => Promise<void>) => async (t: Test) => {
    const opened = await open();
    if ('skip' in opened) { t.plan(0, opened.skip); return; }
    t.teardown(opened.cleanup);
    await scenario(t, opened.backend);
  };
  t.test(`${name}: a USD budget reads only the USD spend from the log`, run(usdBudgetOverEurSpend));
  t.test(`${name}: one summary grouped by currency; the cost from the budget's currency's group, the tokens from every group`, run(costFromItsCurrencysGroup));
}

t.test('a backend that answers no groups for groupBy currency (an in-house one) is asked the currency-filtered summary for the cost', async (t) => {
  const opened = await BACKENDS['log-file']!();
  if ('skip' in opened) return;
  t.teardown(opened.cleanup);
  const real = opened.backend;
  const asked: SummaryQuery[] = [];
  const ungrouped: UsageBackend = {
    id: real.id,
    write: (events, options) => real.write(events, options),
    summary: async (query) => {
      asked.push(query);
      const { totals } = await real.summary!({ ...query, groupBy: undefined });
      return { totals };
    },
  };
  await real.write([
    usageEvent({ policy_id: 'pol-1', cost: 3, currency: 'USD', input_tokens: 100, output_tokens: 10 }),
    usageEvent({ policy_id: 'pol-1', cost: 2, currency: 'EUR', input_tokens: 40, output_tokens: 4 }),
  ]);
  const observer = { usageBackend: () => ungrouped, usageWritten: () => Promise.resolve() };
  const spend = await budgetSpendFromLog(observer, { policyId: 'pol-1', currency: 'EUR' });
  t.same(spend, { micros: 2_000_000, tokens: 154 }, 'the cost of the EUR events, the tokens of both');
  t.same(asked.map((q) => [q.groupBy, q.currency]), [['currency', undefined], [undefined, 'EUR']], 'the grouped summary, then the filtered one');
});
