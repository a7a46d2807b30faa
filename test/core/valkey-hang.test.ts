// Each use of Valkey besides rate limits, on a client made with Relay's options
// (valkeyClientOptions), against a Valkey that accepts connections and never answers (a proxy in
// front of the real Redis): every command fails past the deadline, so each use takes the path it
// has for a Valkey error instead of waiting for good. Key health starts with nothing marked, an
// alert is claimed by the database alone, a shared-spend increment fails (kept locally by the
// budget guard), and the binding meter's sync ends.
import t from 'tap';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { openDatabase } from '../../core/db/open.ts';
import { migrate } from '../../core/db/migrate.ts';
import { BudgetAlertStore } from '../../core/budgets/alert-store.ts';
import { BudgetAlerts } from '../../core/budgets/budget-alerts.ts';
import type { BudgetStatus } from '../../core/budgets/budget-guard.ts';
import { ValkeyAlertClaims } from '../../core/budgets/valkey-alert-claims.ts';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import { BindingMeter } from '../../core/pipeline/binding-meter.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { settlesWithin } from '../support/settles-within.ts';

const TIMEOUT_MS = 300;
const BOUND_MS = 10_000;
const prefix = `relay:test-valkey-hang:${process.pid}`;

const proxy = await startHangingProxy(6379);
proxy.hang();
const redis = new Redis(`redis://127.0.0.1:${proxy.port}/0`, valkeyClientOptions(TIMEOUT_MS));
redis.on('error', () => {});
const db = await openDatabase({ dataDir: null });
await migrate(db);
t.teardown(async () => {
  redis.disconnect();
  proxy.dropHeld();
  await proxy.close();
  await db.close();
});

function recordingLog() {
  const lines: string[] = [];
  const log = { warn: (_o: object, msg: string) => { lines.push(msg); }, debug() {}, info() {}, error() {}, child: () => log };
  return { lines, log: log as unknown as Logger };
}

t.test('key health: loading the shared marks at start ends, with nothing marked', async (t) => {
  const { lines, log } = recordingLog();
  const health = new KeyHealth({ redis, log });
  t.teardown(() => health.close());
  t.equal(await settlesWithin(health.loadShared(), BOUND_MS), 'resolved', 'Relay\'s start-up goes on');
  t.ok(lines.includes('could not load shared key health'), 'and says why');
});

t.test('a budget alert is claimed by the database alone', async (t) => {
  const { lines, log } = recordingLog();
  const id = '00000000-0000-4000-8000-00000000ee01';
  const budget = {
    metadata: { id, slug: 'hang-alert', displayName: 'Hang alert', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
    spec: { scope: {}, window: 'lifetime', timezone: 'UTC', currency: 'USD', action: 'alert', alertAt: [0.5], enabled: true, limitAmount: 10, alertWebhooks: [] },
  } as unknown as Budget;
  const status: BudgetStatus = {
    budgetId: id, windowStart: '2026-01-01T00:00:00.000Z', resetsAt: null, spentAmount: 6, spentTokens: 0, limitAmount: 10, limitTokens: null,
    remainingAmount: 4, remainingTokens: null, currency: 'USD', fraction: 0.6, exceeded: false,
  };
  const alerts = new BudgetAlerts({ store: new BudgetAlertStore(db), claims: new ValkeyAlertClaims(redis, prefix), log });
  alerts.check(budget, status);
  t.equal(await settlesWithin(alerts.idle(), BOUND_MS), 'resolved', 'the alert does not wait on Valkey for good');
  t.equal((await alerts.list(id, 10)).length, 1, 'it is recorded');
  t.ok(lines.includes('claiming a budget alert in Valkey failed; the database decides alone'));
});

t.test('a shared-spend increment fails (the budget guard keeps it counted locally)', async (t) => {
  const add = new ValkeySpend(redis, prefix).add('b1', 0, null, { micros: 1, tokens: 1 });
  t.equal(await settlesWithin(add, BOUND_MS), 'rejected');
});

t.test('the binding meter\'s sync ends', async (t) => {
  const { lines, log } = recordingLog();
  const meter = new BindingMeter({ redis, log, syncMs: 3_600_000 });
  t.teardown(() => meter.close());
  meter.observe('m:h:u', 120);
  t.equal(await settlesWithin(meter.sync(), BOUND_MS), 'resolved');
  t.ok(lines.includes('could not share binding latencies through valkey'));
  t.equal(meter.latencyOf('m:h:u'), 120, 'the instance balances on its own measurements');
});
