// A budget counted in Valkey is reconciled in two steps: its spend read from the usage log, then
// the shared total in Valkey raised to that figure. When one of them fails or gets no answer, the
// warning names that step: a Valkey update that failed must not blame the usage log. Real parts:
// log-postgres on a real Postgres, ValkeySpend on the real Redis, each behind the hanging proxy
// where it must go silent; the lines are the pino logger's own output.
import t, { type Test } from 'tap';
import pg from 'pg';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { createTestDatabase, eventually } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { startHangingProxy, type HangingProxy } from '../support/hanging-proxy.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

// Past this a reconcile counts as failed. Room for the step that answers (a real query) on a loaded
// machine; the pool's and Valkey's own deadlines are longer still, so a silent step is caught by it.
const READ_TIMEOUT_MS = 3_000;
const BACKEND_TIMEOUT_MS = 60_000;
const BOUND_MS = 30_000;
const RECONCILE_MS = 60_000;

const usageDb = await createTestDatabase();
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(BACKEND_TIMEOUT_MS) });
await waitForValkey(direct); // no offline queue: a command before the connection is up fails at once
const prefix = `relay:test-reconcile-log:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
  await usageDb.drop();
});

interface Line { level: number; msg: string; budget?: string; timeoutMs?: number }

/** A budget guard counting in Valkey (`redis`) and reading log-postgres (`pgUrl`), and the pino lines it logs. */
async function reconciling(t: Test, options: { pgUrl: string; redis: Redis; proxy?: HangingProxy }) {
  const id = randomBytes(8).toString('hex');
  const budget = {
    metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: `key-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, action: 'refuse', enabled: true },
  } as unknown as Budget;
  const tables = emptyTables();
  tables.budgets.set(id, budget);
  const snapshot = buildSnapshot(tables);

  const db = poolDatabase(options.pgUrl, 2, { queryTimeoutMs: BACKEND_TIMEOUT_MS, connectTimeoutMs: BACKEND_TIMEOUT_MS });
  const table = `usage_reconcile_${id}`;
  const backend = new PostgresUsageBackend({ db, table });
  // $0.25 already in the log: the first reconcile reads it.
  await backend.write([usageEvent({ relay_key_id: `key-${id}`, cost: 0.25 })]);
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'postgres' } }), log: silentLog, metrics: new Registry() });
  observer.addUsageBackend(backend);
  const lines: Line[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line) as Line); } });
  let now = Date.now();
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now: () => now, reconcileMs: RECONCILE_MS, readTimeoutMs: READ_TIMEOUT_MS,
    readSpend: (filter) => budgetSpendFromLog(observer, filter), shared: new ValkeySpend(options.redis, prefix), log,
  });
  t.teardown(async () => {
    // Held connections first: the pool's end waits for them otherwise.
    options.proxy?.dropHeld();
    await observer.close();
    await db.close();
  });

  await eventually(() => guard.status(budget).spentAmount === 0.25, BOUND_MS, 20).catch(() => undefined);
  t.equal(guard.status(budget).spentAmount, 0.25, 'the first reconcile read the log and raised the shared total');
  const sharedKey = (await direct.keys(`${prefix}:${id}:*`))[0]!;

  /** Starts the next reconcile and waits (bounded) for the line it logs; the budget's warnings. */
  const reconcile = async (): Promise<Line[]> => {
    now += RECONCILE_MS;
    guard.status(budget);
    const warned = () => lines.filter((l) => l.level === 40 && l.budget === budget.metadata.slug);
    await eventually(() => warned().length > 0, BOUND_MS, 20).catch(() => undefined);
    return warned();
  };
  return { backend, table, sharedKey, reconcile, guard, budget };
}

const valkeyStep = "raising a budget's shared spend in Valkey to the usage log's figure";
const logStep = "reading a budget's spend from the usage log";
const counting = "; counting this instance's requests only";
// A Valkey step that fails once the log answered keeps the log's figure.
const countingLog = "; counting the usage log's figure and this instance's requests; the next reconcile raises the shared total again";

t.test('the usage log read fails: the line names the usage log', async (t) => {
  const { table, reconcile, guard, budget } = await reconciling(t, { pgUrl: usageDb.url, redis: direct });
  const client = new pg.Client({ connectionString: usageDb.url });
  await client.connect();
  await client.query(`DROP TABLE ${table}`);
  await client.end();
  const warned = await reconcile();
  t.same(warned.map((l) => l.msg), [`${logStep} failed${counting}`], 'one line, naming the usage log read');
  t.equal(guard.status(budget).spentAmount, 0.25, 'the spend counted so far stands');
});

t.test('the usage log gets no answer: the line names the usage log', async (t) => {
  const proxy = await startHangingProxy(5432);
  t.teardown(() => proxy.close());
  const url = new URL(usageDb.url);
  url.port = String(proxy.port);
  const { reconcile } = await reconciling(t, { pgUrl: url.toString(), redis: direct, proxy });
  proxy.stall();
  const warned = await reconcile();
  t.same(warned.map((l) => l.msg), [`${logStep} did not answer within ${READ_TIMEOUT_MS} ms${counting}`], 'one line, naming the usage log read');
  t.equal(warned[0]?.timeoutMs, READ_TIMEOUT_MS, 'and the deadline it missed');
});

t.test('the Valkey update fails (the usage log answered): the line names Valkey, not the usage log', async (t) => {
  const { sharedKey, reconcile, guard, budget } = await reconciling(t, { pgUrl: usageDb.url, redis: direct });
  // A real Valkey error: the shared total's key now holds a string, so raising it is a WRONGTYPE.
  await direct.set(sharedKey, 'not a hash');
  const warned = await reconcile();
  t.same(warned.map((l) => l.msg), [`${valkeyStep} failed${countingLog}`], 'one line, naming the Valkey update');
  t.equal(guard.status(budget).spentAmount, 0.25, 'the spend counted so far stands');
});

t.test('the Valkey update gets no answer (the usage log answered): the line names Valkey, not the usage log', async (t) => {
  const proxy = await startHangingProxy(6379);
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(BACKEND_TIMEOUT_MS) });
  redis.on('error', () => {});
  t.teardown(async () => {
    proxy.dropHeld();
    redis.disconnect();
    await proxy.close();
  });
  const { reconcile } = await reconciling(t, { pgUrl: usageDb.url, redis });
  proxy.stall();
  const warned = await reconcile();
  t.same(warned.map((l) => l.msg), [`${valkeyStep} did not answer within ${READ_TIMEOUT_MS} ms${countingLog}`], 'one line, naming the Valkey update');
  t.equal(warned[0]?.timeoutMs, READ_TIMEOUT_MS, 'and the deadline it missed');
});
