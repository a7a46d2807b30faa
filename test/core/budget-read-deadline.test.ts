// A read of a budget's spend that never answers must not stay "under way" forever: past its
// deadline it counts as failed (logged once, naming the budget), a fresh read is started, and the
// abandoned read's late answer does not overwrite the fresh one. Reads go through the real
// observer and budgetSpendFromLog to a usage backend whose summaries answer when the test says;
// the shared total through ValkeySpend to the real Valkey, behind a proxy that stops answering.
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { BudgetGuard, SHARED_READ_MS } from '../../core/budgets/budget-guard.ts';
import { REPEAT_WARN_MS } from '../../core/budgets/repeat-warnings.ts';
import { budgetSpendFromLog } from '../../core/budgets/spend-from-log.ts';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Principal } from '../../core/hooks.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { Summary, UsageBackend } from '../../core/observer/types.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { silentLog, testSettings } from '../support/observer-fixtures.ts';

// Long enough that a test's own answer, on a loaded machine, comes well within it.
const READ_TIMEOUT_MS = 500;
const principal = { relayKey: { metadata: { id: 'k1' } }, policy: { metadata: { id: 'p1' } } } as unknown as Principal;
const budget = {
  metadata: { id: 'b1', slug: 'team-b1', displayName: 'B1', createdAt: '2026-01-01T00:00:00Z' },
  spec: { scope: { relayKeyId: 'k1' }, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 1, action: 'refuse', enabled: true },
};
const tables = emptyTables();
tables.budgets.set('b1', budget as never);
const snapshot = buildSnapshot(tables);

/**
 * A usage backend whose summaries (the read's one, grouped by currency) answer (with a cost in USD)
 * only when the test says, none ever on its own.
 */
function heldSummaries(): UsageBackend & { asked: Array<(cost: number) => void> } {
  const asked: Array<(cost: number) => void> = [];
  return {
    id: 'held',
    asked,
    async write() {},
    summary: () => new Promise<Summary>((resolve) => {
      const totals = (cost: number) => ({ requests: 1, input_tokens: 0, output_tokens: 0, cost });
      asked.push((cost) => resolve({ totals: totals(cost), groups: [{ key: 'USD', totals: totals(cost) }] } as never));
    }),
  };
}

function guardOver(t: Test, options: { now: () => number; reconcileMs?: number; shared?: ValkeySpend; readTimeoutMs?: number }) {
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'held' } }), log: silentLog, metrics: new Registry() });
  const backend = heldSummaries();
  observer.addUsageBackend(backend);
  t.teardown(() => observer.close());
  const warned: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  const guard = new BudgetGuard({
    snapshot: () => snapshot, now: options.now, reconcileMs: options.reconcileMs ?? 60_000, readTimeoutMs: options.readTimeoutMs ?? READ_TIMEOUT_MS,
    readSpend: (filter) => budgetSpendFromLog(observer, filter), ...(options.shared ? { shared: options.shared } : {}),
    log: { warn: (fields, msg) => { warned.push({ fields: fields as Record<string, unknown>, msg }); }, info() {} },
  });
  return { guard, backend, warned };
}

/** Waits (bounded) until the backend was asked for n summaries; how many it was asked. */
const asked = async (backend: { asked: unknown[] }, n: number) => {
  for (let i = 0; i < 400 && backend.asked.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  return backend.asked.length;
};

t.test('a first read that never answers: refused (503) past its deadline, read again, and the fresh answer stands', async (t) => {
  let now = Date.parse('2026-03-01T12:00:00Z');
  const { guard, backend, warned } = guardOver(t, { now: () => now });
  const waited = guard.firstReads(principal, ['m']);
  t.ok(waited, 'a request waits for the first read');
  await waited;
  t.equal(await asked(backend, 1), 1, 'the usage log was asked once');
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_UNAVAILABLE', 'past the deadline: still unknown, still refused');
  const timedOut = warned.filter((w) => w.msg.includes(`did not answer within ${READ_TIMEOUT_MS} ms`));
  t.equal(timedOut.length, 1, 'the timed-out read is logged once');
  t.same(timedOut[0]?.fields, { budget: 'team-b1', timeoutMs: READ_TIMEOUT_MS }, 'naming the budget, and nothing of the backend');

  now += 1_000;
  const again = guard.firstReads(principal, ['m']);
  t.ok(again, 'the next request starts a fresh read and waits for it');
  t.equal(await asked(backend, 2), 2, 'the usage log is asked again');
  backend.asked[1]?.(0.5);
  await again;
  t.equal(guard.refusal(principal, 'm'), null, 'the fresh read answered: $0.50 of $1, admitted');
  backend.asked[0]?.(5);
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(guard.status(budget as never).spentAmount, 0.5, 'the abandoned read\'s late answer is dropped');
  t.equal(guard.refusal(principal, 'm'), null);
  t.equal(warned.filter((w) => /did not answer/.test(w.msg)).length, 1, 'and not logged again');
});

t.test('a reconcile that never answers does not block the next one; its late answer is dropped', async (t) => {
  let now = Date.parse('2026-03-01T12:00:00Z');
  const { guard, backend, warned } = guardOver(t, { now: () => now, reconcileMs: 60_000 });
  const first = guard.freshStatus(budget as never);
  await asked(backend, 1);
  backend.asked[0]?.(0.25);
  t.equal((await first).spentAmount, 0.25, 'the first read answers');

  now += 60_000;
  await guard.freshStatus(budget as never); // a reconcile that hangs, waited for until its deadline
  t.equal(await asked(backend, 2), 2);
  t.equal(guard.status(budget as never).spentAmount, 0.25, 'past its deadline: the spend counted so far stands');
  t.equal(guard.refusal(principal, 'm'), null, 'a known budget keeps admitting by it');
  t.equal(warned.filter((w) => w.msg.includes(`did not answer within ${READ_TIMEOUT_MS} ms; counting`)).length, 1, 'logged once');

  now += 60_000;
  const next = guard.freshStatus(budget as never);
  t.equal(await asked(backend, 3), 3, 'the next reconcile reads the log again');
  backend.asked[2]?.(2);
  t.equal((await next).spentAmount, 2, 'and its answer counts');
  backend.asked[1]?.(0.5);
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(guard.status(budget as never).spentAmount, 2, 'the older read answering late does not overwrite it');
  t.equal(guard.refusal(principal, 'm')?.code, 'RELAY_ERR_BUDGET_EXCEEDED');
});

t.test('a read of the shared total in Valkey that never answers does not stop the next ones', async (t) => {
  const proxy = await startHangingProxy(6379);
  // The options relay.ts gives its client.
  const redis = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions() });
  redis.on('error', () => {});
  const prefix = `relay:test-budget-deadline:${process.pid}:${Date.now()}`;
  t.teardown(async () => {
    const direct = new Redis({ host: '127.0.0.1', port: 6379 });
    const keys = await direct.keys(`${prefix}:*`);
    if (keys.length > 0) await direct.del(...keys);
    await direct.quit();
    redis.disconnect();
    proxy.dropHeld();
    await proxy.close();
  });
  await waitForValkey(redis);
  let now = Date.now();
  // Real round trips to Valkey through the proxy: room for a loaded machine (other test files run beside this one).
  const sharedTimeoutMs = 1_000;
  const { guard, backend, warned } = guardOver(t, { now: () => now, reconcileMs: 3_600_000, shared: new ValkeySpend(redis, prefix), readTimeoutMs: sharedTimeoutMs });
  const first = guard.freshStatus(budget as never);
  await asked(backend, 1);
  backend.asked[0]?.(0.25);
  t.equal((await first).spentAmount, 0.25, 'read from the log and raised in Valkey');

  // Silent mid-conversation: the reads are sent and never answered (a connection being opened
  // again would refuse them at once, valkey-options.ts).
  proxy.stall();
  const sharedTimeouts = () => warned.filter((w) => w.msg.includes(`shared spend from Valkey did not answer within ${sharedTimeoutMs} ms`));
  /** Moves the clock on by ms, then starts shared reads (each once the last is over) until n timeouts were logged; how many were. */
  const logged = async (n: number, ms: number) => {
    now += ms;
    for (let i = 0; i < 3_000 && sharedTimeouts().length < n; i++) {
      guard.status(budget as never);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return sharedTimeouts().length;
  };
  t.equal(await logged(1, SHARED_READ_MS), 1, 'shared read 1 past its deadline is logged');
  t.same(sharedTimeouts()[0]?.fields, { budget: 'team-b1', timeoutMs: sharedTimeoutMs });
  now += SHARED_READ_MS;
  guard.status(budget as never); // read 2: its timeout is not logged, the same failure was a moment ago
  t.equal(await logged(2, REPEAT_WARN_MS), 2, 'a minute later, read 3 past its deadline is logged: read 2 did not stop it');
  t.same(sharedTimeouts()[1]?.fields, { budget: 'team-b1', timeoutMs: sharedTimeoutMs, notLogged: 1 }, 'counting read 2, not logged');
  t.equal(guard.status(budget as never).spentAmount, 0.25, 'the spend counted so far stands meanwhile');
});
