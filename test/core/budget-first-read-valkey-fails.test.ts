// A shared budget's first read answers from the usage log even when raising the shared total in
// Valkey to the log's figure fails or gets no answer: the log's figure is known spend (as without
// Valkey), so requests under the limit go through and requests over it get the budget's 429, not
// the 503 of a spend nobody can say. Once Valkey answers again, its totals merge without counting
// this instance's spend twice. Only a usage log that fails leaves the spend unknown, and its line
// says so. Real parts: log-postgres on a real Postgres, ValkeySpend on the real Redis (a WRONGTYPE
// key, or the hanging proxy gone silent), pino's own lines.
import t, { type Test } from 'tap';
import pg from 'pg';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard, whatCounts } from '../../core/budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { sharedSpendKey, sharedTotalId, ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { windowAt } from '../../core/budgets/window.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import type { Principal } from '../../core/hooks.ts';
import { createObserver } from '../../core/observer/observer.ts';
import { createTestDatabase, eventually } from '../../core/testing.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

// Past this a read counts as failed: room for the real Postgres query on a loaded machine; the
// pool's and Valkey's own deadlines are longer still, so a silent Valkey is caught by it.
const READ_TIMEOUT_MS = 3_000;
const BACKEND_TIMEOUT_MS = 60_000;
const BOUND_MS = 30_000;
const RECONCILE_MS = 60_000;

const usageDb = await createTestDatabase();
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(BACKEND_TIMEOUT_MS) });
const prefix = `relay:test-first-read-valkey:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
  await usageDb.drop();
});

interface Line { level: number; msg: string; budget?: string }

const valkeyStep = "raising a budget's shared spend in Valkey to the usage log's figure";
const fromLog = "; counting the usage log's figure and this instance's requests; the next reconcile raises the shared total again";

/**
 * A refusing lifetime budget of `limit` USD counted in Valkey (`redis`) with $0.25 already in
 * log-postgres, its guard (clock held, so only the test starts reads), and the pino lines it logs.
 * `before` runs before the first read starts (to break Valkey).
 */
async function firstRead(t: Test, options: { limit: number; redis: Redis; before?: (names: { sharedKey: string; table: string }) => Promise<void> }) {
  const id = randomBytes(8).toString('hex');
  const budget = {
    metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: `key-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: options.limit, action: 'refuse', enabled: true },
  } as unknown as Budget;
  const tables = emptyTables();
  tables.budgets.set(id, budget);
  const snapshot = buildSnapshot(tables);
  const principal = { relayKey: { metadata: { id: `key-${id}` } }, policy: { metadata: { id: 'p1' } } } as unknown as Principal;

  const db = poolDatabase(usageDb.url, 2, { queryTimeoutMs: BACKEND_TIMEOUT_MS, connectTimeoutMs: BACKEND_TIMEOUT_MS });
  const table = `usage_first_valkey_${id}`;
  const backend = new PostgresUsageBackend({ db, table });
  await backend.write([usageEvent({ relay_key_id: `key-${id}`, cost: 0.25 })]);
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'postgres' } }), log: silentLog, metrics: new Registry() });
  observer.addUsageBackend(backend);
  t.teardown(async () => {
    await observer.close();
    await db.close();
  });
  const lines: Line[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line) as Line); } });
  let now = Date.now();
  const sharedKey = sharedSpendKey(prefix, sharedTotalId(id, whatCounts(budget.spec)), windowAt(budget.spec, now).startMs);
  await options.before?.({ sharedKey, table });
  let counted = 0;
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now: () => now, reconcileMs: RECONCILE_MS, readTimeoutMs: READ_TIMEOUT_MS,
    readSpend: (filter) => budgetSpendFromLog(observer, filter), shared: new ValkeySpend(options.redis, prefix), log,
    onCounted: () => { counted++; },
  });
  // The first read, as a request starts it; waited for until it answers or fails (the request's own wait is shorter).
  const refusal = async () => {
    await guard.firstReads(principal, ['m']);
    await eventually(() => lines.length > 0 || guard.refusal(principal, 'm')?.code !== 'RELAY_ERR_BUDGET_UNAVAILABLE', BOUND_MS, 20).catch(() => undefined);
    return guard.refusal(principal, 'm');
  };
  const warned = () => lines.filter((l) => l.level === 40 && l.budget === budget.metadata.slug).map((l) => l.msg);
  return {
    guard, budget, backend, sharedKey, refusal, warned, principal,
    counted: () => counted,
    advance: (ms: number) => { now += ms; },
    spendOf: (cost: number) => usageEvent({ relay_key_id: `key-${id}`, cost }),
  };
}

/** Valkey answers WRONGTYPE for the budget's shared total: its key holds a string. */
const wrongType = async ({ sharedKey }: { sharedKey: string }) => { await direct.set(sharedKey, 'not a hash'); };

t.test('Valkey fails (WRONGTYPE) on the first read: a budget under its limit admits, by the usage log\'s figure', async (t) => {
  const { refusal, warned, guard, budget } = await firstRead(t, { limit: 1, redis: direct, before: wrongType });
  t.equal(await refusal(), null, '$0.25 of $1: admitted, not a 503');
  t.equal(guard.status(budget).spentAmount, 0.25, 'the usage log\'s figure is the spend');
  t.same(warned(), [`${valkeyStep} failed${fromLog}`], 'one line, naming Valkey and what is counted meanwhile');
});

t.test('Valkey fails (WRONGTYPE) on the first read: a budget past its limit refuses with its 429, not a 503', async (t) => {
  const { refusal } = await firstRead(t, { limit: 0.2, redis: direct, before: wrongType });
  const refused = await refusal();
  t.equal(refused?.code, 'RELAY_ERR_BUDGET_EXCEEDED', '$0.25 of $0.20: spent');
  t.equal(refused?.status, 429);
});

t.test('Valkey gets no answer on the first read: the usage log\'s figure counts past the deadline', async (t) => {
  const proxy = await startHangingProxy(6379);
  // Valkey's own deadline past the read's, and short enough that its timer does not hold the process long at the end.
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(3 * READ_TIMEOUT_MS) });
  redis.on('error', () => {});
  t.teardown(async () => {
    proxy.dropHeld();
    redis.disconnect();
    await proxy.close();
  });
  await waitForValkey(redis);
  await redis.ping();
  const under = await firstRead(t, { limit: 1, redis, before: async () => { proxy.stall(); } });
  const over = await firstRead(t, { limit: 0.2, redis });
  const [admitted, refused] = await Promise.all([under.refusal(), over.refusal()]);
  t.equal(admitted, null, '$0.25 of $1: admitted, not a 503');
  t.same(under.warned(), [`${valkeyStep} did not answer within ${READ_TIMEOUT_MS} ms${fromLog}`], 'one line, naming Valkey');
  t.equal(refused?.code, 'RELAY_ERR_BUDGET_EXCEEDED', '$0.25 of $0.20: spent');
  t.equal(refused?.status, 429);
});

t.test('once Valkey answers again, its totals merge with the log\'s figure without counting this instance\'s spend twice', async (t) => {
  const { refusal, guard, budget, backend, sharedKey, counted, advance, spendOf } = await firstRead(t, { limit: 10, redis: direct, before: wrongType });
  t.equal(await refusal(), null);
  t.equal(guard.status(budget).spentAmount, 0.25, 'the log\'s figure');

  // A request while Valkey still refuses: its increment fails, this instance keeps counting it.
  const refused = spendOf(0.5);
  await backend.write([refused]);
  guard.record(refused);
  await eventually(() => counted() === 1, BOUND_MS, 20);
  t.equal(guard.status(budget).spentAmount, 0.75, 'counted once: $0.25 + $0.50');

  // Valkey answers again, without what it lost: the next increment's total is below the spend.
  await direct.del(sharedKey);
  const acknowledged = spendOf(0.1);
  await backend.write([acknowledged]);
  guard.record(acknowledged);
  await eventually(() => counted() === 2, BOUND_MS, 20);
  t.equal(await direct.hget(sharedKey, 'micros'), '100000', 'Valkey holds the one increment it acknowledged');
  t.equal(guard.status(budget).spentAmount, 0.85, 'the acknowledged increment is not lost to Valkey\'s lower total');

  // The next reconcile raises Valkey to the log's $0.85, which counts both requests.
  advance(RECONCILE_MS);
  guard.status(budget);
  await eventually(async () => await direct.hget(sharedKey, 'micros') === '850000', BOUND_MS, 20);
  await guard.freshStatus(budget);
  t.equal(guard.status(budget).spentAmount, 0.85, 'the raised total, the $0.50 Valkey refused not counted again');
  t.equal(guard.status(budget).spentTokens, 3 * 120, 'tokens too');
});

t.test('the usage log fails on the first read: the spend stays unknown, and the line says until the usage log answers', async (t) => {
  const { refusal, warned } = await firstRead(t, {
    limit: 1, redis: direct,
    before: async ({ table }) => {
      const client = new pg.Client({ connectionString: usageDb.url });
      await client.connect();
      await client.query(`DROP TABLE ${table}`);
      await client.end();
    },
  });
  t.equal((await refusal())?.code, 'RELAY_ERR_BUDGET_UNAVAILABLE', 'nothing is known: 503');
  t.same(warned(), ["reading a budget's spend from the usage log failed; its spend stays unknown (a refusing budget answers 503) until the usage log answers"]);
});
