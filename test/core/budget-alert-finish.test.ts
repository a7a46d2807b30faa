// A budget alert whose row was inserted and whose webhook answered, but whose outcome could not be
// written to the database: no later request fires the alert again (its row exists), so recording
// the outcome is retried with the deliveries' backoff until it is written; when it never is, the
// warning says the record stays "fired" and carries each webhook's outcome, not a retry that never
// comes. Real parts: the alert store on the embedded database (its table renamed away while the
// webhook is answered, then back), BudgetAlerts, a real HTTP webhook, pino's own lines.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { BudgetAlertStore } from '../../core/budgets/alert-store.ts';
import { BudgetAlerts } from '../../core/budgets/budget-alerts.ts';
import type { BudgetStatus } from '../../core/budgets/budget-guard.ts';
import type { Budget } from '../../core/catalog/kinds.ts';
import { migrate } from '../../core/db/migrate.ts';
import { openDatabase } from '../../core/db/open.ts';
import { eventually } from '../../core/testing.ts';

const BOUND_MS = 30_000;
const ATTEMPTS = 3;

interface Line { level: number; msg: string; budget?: string; outcome?: string; deliveries?: Array<{ target: string; status: string }> }

/** An alert budget whose webhook renames the alerts table away before it answers 200 (the row is then inserted, its outcome not writable). */
async function alertWhoseFinishFails(t: Test) {
  const db = await openDatabase({ dataDir: null });
  await migrate(db);
  let posts = 0;
  const hook: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts++;
      void db.query('ALTER TABLE budget_alerts RENAME TO budget_alerts_away').then(() => res.end('ok'));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    await new Promise<void>((resolve) => hook.close(() => resolve()));
    await db.close();
  });
  const id = randomUUID();
  const budget = {
    metadata: { id, slug: `team-${id}`, displayName: id, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' },
    spec: { scope: {}, window: 'lifetime', timezone: 'UTC', currency: 'USD', limitAmount: 10, action: 'alert', alertAt: [0.5], enabled: true,
      alertWebhooks: [{ url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`, format: 'json' }] },
  } as unknown as Budget;
  const status: BudgetStatus = {
    budgetId: id, windowStart: new Date(0).toISOString(), resetsAt: null, spentAmount: 6, spentTokens: 0, limitAmount: 10, limitTokens: null,
    remainingAmount: 4, remainingTokens: null, currency: 'USD', fraction: 0.6, exceeded: false,
  };
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Line); } });
  // The retries' backoff is long enough for the test to put the table back between two attempts.
  const alerts = new BudgetAlerts({ store: new BudgetAlertStore(db), log, delivery: { attempts: ATTEMPTS, retryBaseMs: 1_000, timeoutMs: 10_000 } });
  const tableBack = () => db.query('ALTER TABLE budget_alerts_away RENAME TO budget_alerts');
  const ofBudget = (level: number) => lines.filter((l) => l.level === level && l.budget === budget.metadata.slug);
  /** A request's spend past the alert's fraction, its alert tried until over. */
  const request = async () => {
    alerts.check(budget, status);
    await alerts.idle();
  };
  return { alerts, budget, status, request, tableBack, ofBudget, posts: () => posts, id };
}

t.test('the outcome\'s write fails once: it is retried and recorded, delivered', async (t) => {
  const { alerts, budget, status, request, tableBack, ofBudget, posts, id } = await alertWhoseFinishFails(t);
  alerts.check(budget, status);
  // The first write of the outcome failed (the line says so); the database is back before the next.
  await eventually(() => ofBudget(40).some((l) => /could not be recorded/.test(l.msg)), BOUND_MS, 10);
  await tableBack();
  await alerts.idle();
  await request(); // a later request's spend, as before the fix's message promised
  const [record] = await alerts.list(id, 10);
  t.equal(record?.status, 'delivered', 'the record says delivered, not fired');
  t.same(record?.deliveries.map((d) => d.status), ['delivered'], 'and its webhook delivered, not pending');
  t.equal(posts(), 1, 'the webhook was called once');
});

t.test('the outcome\'s write keeps failing: the warning says the record stays fired, and carries the outcome', async (t) => {
  const { request, tableBack, ofBudget, posts, id, alerts } = await alertWhoseFinishFails(t);
  await request();
  const last = ofBudget(40).at(-1);
  t.equal(last?.msg, `a budget alert's outcome (delivered) could not be recorded after ${ATTEMPTS} attempts: its record stays "fired" with its webhooks pending and is not tried again; each webhook's outcome is in this line`, 'the last line says what happened and what stays');
  t.same(last?.deliveries?.map((d) => d.status), ['delivered'], 'the webhook\'s outcome is in the line');
  t.match(last?.deliveries?.[0]?.target, /^http:\/\/127\.0\.0\.1:\d+\/…$/, 'named by its origin');
  t.notOk(ofBudget(40).some((l) => /tried again on the next request/.test(l.msg)), 'no line promises a retry on the next request');
  await tableBack();
  await request();
  const [record] = await alerts.list(id, 10);
  t.equal(record?.status, 'fired', 'as the line said: the record stays fired');
  t.equal(posts(), 1, 'the webhook was called once');
});
