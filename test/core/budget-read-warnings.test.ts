// A backend that fails fast must not log a warning per budget every time its spend is read again
// (a second apart while the spend is unknown, half a second for a shared total) for as long as the
// outage lasts: the first failure warns, the same failure again at most once a minute with how
// many were not logged, and the first read that answers after failures says so once, at info.
// Real parts: log-postgres on a real Postgres behind the hanging proxy (refusing connections, then
// listening again), ValkeySpend on the real Redis (a WRONGTYPE key, then none), pino's own lines.
import t, { type Test } from 'tap';
import pino from 'pino';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard, SHARED_READ_MS, whatCounts } from '../../core/budgets/budget-guard.ts';
import { REPEAT_WARN_MS } from '../../core/budgets/repeat-warnings.ts';
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

const BOUND_MS = 30_000;
/** How soon a budget whose spend is unknown is read again (budget-guard.ts, UNKNOWN_RETRY_MS). */
const UNKNOWN_RETRY_MS = 1_000;

const usageDb = await createTestDatabase();
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions() });
await waitForValkey(direct); // no offline queue: a command before the connection is up fails at once
const prefix = `relay:test-read-warnings:${process.pid}:${randomBytes(4).toString('hex')}`;
t.teardown(async () => {
  const keys = await direct.keys(`${prefix}:*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
  await usageDb.drop();
});

interface Line { level: number; msg: string; budget?: string; notLogged?: number; failures?: number; err?: { message: string } }

/**
 * A refusing lifetime budget of $1 with $0.25 in log-postgres, its guard reading it at `pgUrl` on
 * the clock `now`, and its pino lines (info and up). The $0.25 is written on a connection of its
 * own: the guard's pool has none open before its first read.
 */
async function budgetOver(t: Test, options: { pgUrl: string; now: () => number; shared?: ValkeySpend }) {
  const id = randomBytes(8).toString('hex');
  const budget = {
    metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: `key-${id}` }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 1, action: 'refuse', enabled: true },
  } as unknown as Budget;
  const tables = emptyTables();
  tables.budgets.set(id, budget);
  const snapshot = buildSnapshot(tables);
  const principal = { relayKey: { metadata: { id: `key-${id}` } }, policy: { metadata: { id: 'p1' } } } as unknown as Principal;
  const table = `usage_warnings_${id}`;
  const seeding = poolDatabase(usageDb.url, 1);
  await new PostgresUsageBackend({ db: seeding, table }).write([usageEvent({ relay_key_id: `key-${id}`, cost: 0.25 })]);
  await seeding.close();
  const db = poolDatabase(options.pgUrl, 2);
  const backend = new PostgresUsageBackend({ db, table });
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'postgres' } }), log: silentLog, metrics: new Registry() });
  observer.addUsageBackend(backend);
  t.teardown(async () => {
    await observer.close();
    await db.close();
  });
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Line); } });
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now: options.now, reconcileMs: 3_600_000, readTimeoutMs: 15_000,
    readSpend: (filter) => budgetSpendFromLog(observer, filter), log, ...(options.shared ? { shared: options.shared } : {}),
  });
  const ofBudget = (level: number) => lines.filter((l) => l.level === level && l.budget === budget.metadata.slug);
  return { guard, budget, principal, warned: () => ofBudget(40), told: () => ofBudget(30) };
}

t.test('the usage log refuses connections while a budget\'s spend is unknown: one warning, then one a minute, then one line when it answers', async (t) => {
  const proxy = await startHangingProxy(5432);
  t.teardown(() => proxy.close());
  const url = new URL(usageDb.url);
  url.port = String(proxy.port);
  await proxy.refuse();
  let now = Date.now();
  const { guard, budget, principal, warned, told } = await budgetOver(t, { pgUrl: url.toString(), now: () => now });

  /** The next read a request starts once the last one failed, waited for until it is over. */
  const read = async () => {
    now += UNKNOWN_RETRY_MS;
    for (let wait = guard.firstReads(principal, ['m']); wait; wait = guard.firstReads(principal, ['m'])) await wait;
  };
  const unknownLine = "reading a budget's spend from the usage log failed; its spend stays unknown (a refusing budget answers 503) until the usage log answers";
  for (let i = 0; i < 5; i++) await read();
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_UNAVAILABLE', 'five reads failed: still unknown');
  t.same(warned().map((l) => l.msg), [unknownLine], 'five seconds of failures, one warning');
  t.match(warned()[0]?.err?.message, /ECONNREFUSED/, 'with the error');

  now += REPEAT_WARN_MS;
  await read();
  t.same(warned().map((l) => l.msg), [unknownLine, `${unknownLine} (4 failures of this read not logged since its last warning)`], 'a minute later, the same failure warns again, counting the ones not logged');
  t.equal(warned()[1]?.notLogged, 4);

  await proxy.reopen();
  await read();
  t.equal(guard.refusal(principal, 'm'), null, 'the usage log answers: $0.25 of $1, admitted');
  t.equal(guard.status(budget).spentAmount, 0.25);
  t.same(told().map((l) => [l.msg, l.failures]), [["reading a budget's spend from the usage log answers again (after 6 failures)", 6]], 'said once, at info');
  t.equal(warned().length, 2, 'and no more warnings');
});

t.test('a shared total that Valkey fails to read (WRONGTYPE) for a few seconds: one warning, then one a minute, then one line when it answers', async (t) => {
  // The real clock, moved on by the test past a minute.
  let skipped = 0;
  const now = () => Date.now() + skipped;
  const { guard, budget, warned, told } = await budgetOver(t, { pgUrl: usageDb.url, now, shared: new ValkeySpend(direct, prefix) });
  t.equal((await guard.freshStatus(budget)).spentAmount, 0.25, 'the first read answered');
  const sharedKey = sharedSpendKey(prefix, sharedTotalId(budget.metadata.id, whatCounts(budget.spec)), windowAt(budget.spec, now()).startMs);
  await eventually(async () => await direct.exists(sharedKey) === 1, BOUND_MS, 20);
  await direct.set(sharedKey, 'not a hash');

  /** Looks at the budget (each look reads the shared total again, SHARED_READ_MS after the last read began) until done() or for ms. */
  const lookUntil = async (done: () => boolean, ms: number) => {
    const start = Date.now();
    while (!done() && Date.now() - start < ms) {
      guard.status(budget);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const failed = "reading a budget's shared spend from Valkey failed";
  await lookUntil(() => false, 6 * SHARED_READ_MS);
  t.same(warned().map((l) => l.msg), [failed], 'three seconds of failed reads, one warning');
  t.match(warned()[0]?.err?.message, /WRONGTYPE/);

  skipped += REPEAT_WARN_MS;
  await lookUntil(() => warned().length > 1, BOUND_MS);
  const notLogged = warned()[1]?.notLogged ?? 0;
  t.ok(notLogged >= 1, `a minute later, the same failure warns again, counting the ones not logged (${notLogged})`);
  t.equal(warned()[1]?.msg, `${failed} (${notLogged} ${notLogged === 1 ? 'failure' : 'failures'} of this read not logged since its last warning)`);

  await direct.del(sharedKey);
  await lookUntil(() => told().length > 0, BOUND_MS);
  t.same(told().map((l) => [l.msg, l.failures]), [[`reading a budget's shared spend from Valkey answers again (after ${notLogged + 2} failures)`, notLogged + 2]], 'Valkey answers: said once, at info, counting every failure');
  t.equal(warned().length, 2, 'and no more warnings');
  t.equal(guard.status(budget).spentAmount, 0.25, 'the spend counted so far stands');
});
