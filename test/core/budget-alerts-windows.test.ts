// Budget alerts against the embedded database (PGlite, as a default install runs): a fraction
// fires once per window, again in the next window, not again after a restart in the same one
// (the row's unique key), and a rolling budget fires once per period of its length; per version of
// what the budget counts (a scope edit fires again, a limit edit does not).
import t from 'tap';
import { openDatabase } from '../../core/db/open.ts';
import { migrate } from '../../core/db/migrate.ts';
import { BudgetAlertStore } from '../../core/budgets/alert-store.ts';
import { BudgetAlerts } from '../../core/budgets/budget-alerts.ts';
import type { BudgetStatus } from '../../core/budgets/budget-guard.ts';
import type { Budget, BudgetSpec } from '../../core/catalog/kinds.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const db = await openDatabase({ dataDir: null });
await migrate(db);
const hooks = await startWebhookReceiver();
t.teardown(async () => {
  await hooks.close();
  await db.close();
});
const store = new BudgetAlertStore(db);
const DAY = 86_400_000;
let clock = Date.parse('2026-11-26T12:00:00.000Z');
const alerter = () => new BudgetAlerts({ store, log: { warn: () => undefined, info: () => undefined }, delivery: { attempts: 1, retryBaseMs: 10, timeoutMs: 2_000 }, now: () => clock });

const budget = (id: string, window: BudgetSpec['window']): Budget => ({
  metadata: { id, slug: id, displayName: id, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
  spec: { scope: {}, window, timezone: 'UTC', currency: 'USD', action: 'alert', alertAt: [0.5, 1], enabled: true, limitAmount: 10, alertWebhooks: [{ url: `${hooks.url}/${id}`, format: 'json' }] },
});
const status = (budgetId: string, fraction: number, windowStart: string | null): BudgetStatus => ({
  budgetId, windowStart: windowStart ?? new Date(clock - 7 * DAY).toISOString(), resetsAt: windowStart ? new Date(Date.parse(windowStart) + DAY).toISOString() : null,
  spentAmount: fraction * 10, spentTokens: 0, limitAmount: 10, limitTokens: null, remainingAmount: Math.max(0, 10 - fraction * 10), remainingTokens: null,
  currency: 'USD', fraction, exceeded: fraction >= 1,
});
const thresholds = (path: string) => hooks.on(path).map((h) => `${h.body.threshold}@${h.body.status.windowStart.slice(0, 10)}`);

t.test('a daily budget: once per fraction per window, again in the next', async (t) => {
  const id = '00000000-0000-4000-8000-00000000d001';
  const daily = budget(id, 'daily');
  const a = alerter();
  a.check(daily, status(id, 0.6, '2026-11-26T00:00:00.000Z'));
  a.check(daily, status(id, 0.7, '2026-11-26T00:00:00.000Z'));
  a.check(daily, status(id, 1.2, '2026-11-26T00:00:00.000Z'));
  await a.idle();
  t.same(thresholds(`/${id}`), ['0.5@2026-11-26', '1@2026-11-26']);
  const restarted = alerter();
  restarted.check(daily, status(id, 1.3, '2026-11-26T00:00:00.000Z'));
  await restarted.idle();
  t.equal(hooks.on(`/${id}`).length, 2, 'a restarted instance does not fire the same window again (the row\'s unique key)');
  clock += DAY;
  restarted.check(daily, status(id, 0.55, '2026-11-27T00:00:00.000Z'));
  await restarted.idle();
  t.same(thresholds(`/${id}`), ['0.5@2026-11-26', '1@2026-11-26', '0.5@2026-11-27'], 'the next window fires again');
  const recorded = await store.list(id, 10);
  t.same(recorded.map((r) => [r.windowStart.slice(0, 10), r.threshold, r.status]), [['2026-11-27', 0.5, 'delivered'], ['2026-11-26', 1, 'delivered'], ['2026-11-26', 0.5, 'delivered']]);
});

t.test('a rolling budget: once per period of its length', async (t) => {
  const id = '00000000-0000-4000-8000-00000000d002';
  const rolling = budget(id, { rollingDays: 7 });
  const a = alerter();
  const period = (ms: number) => Math.floor(ms / (7 * DAY));
  const first = clock;
  a.check(rolling, status(id, 0.6, null));
  clock += DAY;
  a.check(rolling, status(id, 0.6, null));
  await a.idle();
  t.equal(hooks.on(`/${id}`).length, period(first) === period(clock) ? 1 : 2, 'a day later fires again only if a new 7-day period began');
  const before = hooks.on(`/${id}`).length;
  clock += 7 * DAY;
  a.check(rolling, status(id, 0.6, null));
  await a.idle();
  t.equal(hooks.on(`/${id}`).length, before + 1, 'a week later is the next period: it fires again');
  const rows = await store.list(id, 10);
  t.ok(rows.every((r) => Date.parse(r.windowStart) % (7 * DAY) === 0), 'periods are whole multiples of the window\'s length since the epoch');
});

t.test('a budget without webhooks records its alerts', async (t) => {
  const id = '00000000-0000-4000-8000-00000000d003';
  const quiet: Budget = { ...budget(id, 'monthly'), spec: { ...budget(id, 'monthly').spec, alertWebhooks: undefined } };
  const a = alerter();
  a.check(quiet, status(id, 0.5, '2026-11-01T00:00:00.000Z'));
  await a.idle();
  const [row] = await store.list(id, 10);
  t.match(row, { threshold: 0.5, status: 'fired', deliveries: [] });
});

t.test('Valkey unreachable: the database decides alone, and the alert still fires once', async (t) => {
  const { Redis } = await import('ioredis');
  const { ValkeyAlertClaims } = await import('../../core/budgets/valkey-alert-claims.ts');
  // Port 9 on loopback: nothing listens; no offline queue, so each command fails at once.
  const down = new Redis({ host: '127.0.0.1', port: 9, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  down.on('error', () => undefined);
  t.teardown(() => down.disconnect());
  const warnings: string[] = [];
  const id = '00000000-0000-4000-8000-00000000d004';
  const make = () => new BudgetAlerts({ store, claims: new ValkeyAlertClaims(down), log: { warn: (_o, msg) => { warnings.push(msg); }, info: () => undefined }, delivery: { attempts: 1, retryBaseMs: 10, timeoutMs: 2_000 }, now: () => clock });
  const [a, b] = [make(), make()];
  a.check(budget(id, 'daily'), status(id, 0.6, '2026-12-10T00:00:00.000Z'));
  b.check(budget(id, 'daily'), status(id, 0.6, '2026-12-10T00:00:00.000Z'));
  await Promise.all([a.idle(), b.idle()]);
  t.equal(hooks.on(`/${id}`).length, 1, 'two alerters, one alert');
  t.ok(warnings.includes('claiming a budget alert in Valkey failed; the database decides alone'), 'the Valkey failure is logged');
});

t.test('per version of what the budget counts: a scope edit fires again in the window, a limit edit does not, after a restart too (the row\'s key)', async (t) => {
  const id = '00000000-0000-4000-8000-00000000d005';
  const window = '2026-12-11T00:00:00.000Z';
  const original = budget(id, 'daily');
  const rescoped: Budget = { ...original, spec: { ...original.spec, scope: { policyId: 'another-policy' } } };
  const relimited: Budget = { ...original, spec: { ...original.spec, limitAmount: 20, alertAt: [0.5, 1, 0.25] } };
  const a = alerter();
  a.check(original, status(id, 0.6, window));
  await a.idle();
  a.check(relimited, status(id, 0.55, window));
  await a.idle();
  t.same(thresholds(`/${id}`), ['0.5@2026-12-11', '0.25@2026-12-11'], 'a limit and alertAt edit: 0.5 not sent again; the new 0.25 fires');
  a.check(rescoped, status(id, 0.6, window));
  await a.idle();
  t.same(thresholds(`/${id}`), ['0.5@2026-12-11', '0.25@2026-12-11', '0.5@2026-12-11'], 'a scope edit: 0.5 fires again for the new scope\'s spend');
  const restarted = alerter();
  for (const b of [original, relimited, rescoped]) restarted.check(b, status(id, 0.6, window));
  await restarted.idle();
  t.equal(hooks.on(`/${id}`).length, 3, 'a restarted instance fires neither version again (the row\'s unique key)');
  t.same((await store.list(id, 10)).map((r) => r.threshold).sort(), [0.25, 0.5, 0.5], 'one row per version and fraction');
});

t.test('an alert recorded before the digest (an older release: counts_digest \'\') counts as fired for every version of its window', async (t) => {
  const id = '00000000-0000-4000-8000-00000000d006';
  const window = '2026-12-12T00:00:00.000Z';
  // As an older instance recorded it before this release's migration.
  await db.query(`INSERT INTO budget_alerts (budget_id, window_start, threshold, fraction, spent_amount, spent_tokens, currency, status, deliveries)
    VALUES ($1, $2, 0.5, 0.6, 6, 0, 'USD', 'delivered', '[]'::jsonb)`, [id, window]);
  const original = budget(id, 'daily');
  const rescoped: Budget = { ...original, spec: { ...original.spec, currency: 'EUR' } };
  const a = alerter();
  a.check(original, status(id, 0.6, window));
  a.check(rescoped, status(id, 0.6, window));
  await a.idle();
  t.same(hooks.on(`/${id}`), [], 'not sent again, whichever version');
  a.check(original, status(id, 1.1, window));
  await a.idle();
  t.same(thresholds(`/${id}`), ['1@2026-12-12'], 'a fraction it had not fired still fires');
});
