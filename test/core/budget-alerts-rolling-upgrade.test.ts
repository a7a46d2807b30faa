// Budget alerts during a rolling upgrade, on PGlite and on Postgres: after migrations 007 and 008 a
// release from before 007 still records its alerts with its own statement (ON CONFLICT on the
// budget, window and threshold), and neither release sends what the other recorded, while this
// release keeps one alert per version of what the budget counts. Rows 007 recorded stay listed.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../core/db/open.ts';
import { listMigrations, migrate } from '../../core/db/migrate.ts';
import { BudgetAlertStore, type FiredAlert } from '../../core/budgets/alert-store.ts';
import { createTestDatabase } from '../../core/testing.ts';
import type { Database } from '../../core/db/types.ts';

const WINDOW = new Date('2026-12-01T00:00:00.000Z');
// The statement of the release before 007 (core/budgets/alert-store.ts at daac8ca^), verbatim.
const PRE_007_CLAIM = `INSERT INTO budget_alerts (budget_id, window_start, threshold, fraction, spent_amount, spent_tokens, currency, status, deliveries)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'fired', $8::jsonb)
       ON CONFLICT (budget_id, window_start, threshold) DO NOTHING RETURNING id`;
// The statement of the 007 release (core/budgets/alert-store.ts at daac8ca), verbatim.
const RELEASE_007_CLAIM = `INSERT INTO budget_alerts (budget_id, window_start, threshold, counts_digest, fraction, spent_amount, spent_tokens, currency, status, deliveries)
       SELECT $1::uuid, $2::timestamptz, $3::float8, $4::text, $5::float8, $6::float8, $7::bigint, $8::text, 'fired', $9::jsonb
       WHERE NOT EXISTS (SELECT 1 FROM budget_alerts WHERE budget_id = $1::uuid AND window_start = $2::timestamptz AND threshold = $3::float8 AND counts_digest = '')
       ON CONFLICT (budget_id, window_start, threshold, counts_digest) DO NOTHING RETURNING id`;

const alert = (budgetId: string, countsDigest: string, threshold = 0.5): FiredAlert => ({
  budgetId, countsDigest, windowStart: WINDOW, threshold, fraction: threshold + 0.05, spentAmount: 6, spentTokens: 0, currency: 'USD', deliveries: [],
});
const pre007 = async (db: Database, budgetId: string, threshold = 0.5) =>
  (await db.query<{ id: string }>(PRE_007_CLAIM, [budgetId, WINDOW.toISOString(), threshold, threshold + 0.05, 6, 0, 'USD', '[]'])).rows[0]?.id ?? null;
const release007 = async (db: Database, a: FiredAlert) =>
  (await db.query<{ id: string }>(RELEASE_007_CLAIM, [a.budgetId, a.windowStart.toISOString(), a.threshold, a.countsDigest, a.fraction, a.spentAmount, a.spentTokens, a.currency, '[]'])).rows[0]?.id ?? null;

async function suite(t: Test, db: Database): Promise<void> {
  // Rows the 007 release recorded before this release's migration: a re-armed version among them.
  await migrate(db, listMigrations().filter((m) => m.version <= 7));
  const earlier = randomUUID();
  for (const a of [alert(earlier, 'd1'), alert(earlier, 'd2'), alert(earlier, 'd1', 1)]) t.ok(await release007(db, a), `007 recorded ${a.countsDigest}@${a.threshold}`);
  await migrate(db);
  const store = new BudgetAlertStore(db);

  t.test('rows the 007 release recorded stay listed, and still count as fired', async (t) => {
    t.same((await store.list(earlier, 10)).map((r) => r.threshold), [1, 0.5, 0.5]);
    t.equal(await store.claim(alert(earlier, 'd1')), null, 'the first version: not again');
    t.equal(await store.claim(alert(earlier, 'd2')), null, 'the re-armed version: not again');
    t.ok(await store.claim(alert(earlier, 'd3')), 'a version not yet fired fires');
  });

  t.test('a release from before 007 records its alert, and this release does not send it again for any version', async (t) => {
    const id = randomUUID();
    const row = await pre007(db, id);
    t.ok(row, 'recorded (before 008: no unique key matches its ON CONFLICT, and it errors)');
    t.equal(await pre007(db, id), null, 'its own second try: already fired');
    t.equal(await store.claim(alert(id, 'd1')), null);
    t.equal(await store.claim(alert(id, 'd2')), null);
    await db.query(`UPDATE budget_alerts SET status = 'delivered', updated_at = now() WHERE id = $1`, [row]);
    t.match(await store.list(id, 10), [{ id: String(row), status: 'delivered' }], 'its outcome recorded, and listed');
  });

  t.test('this release first: the older one does not send it again; a re-armed version still fires once', async (t) => {
    const id = randomUUID();
    t.ok(await store.claim(alert(id, 'd1')));
    t.equal(await pre007(db, id), null, 'the older release finds it fired');
    const rearmed = await store.claim(alert(id, 'd2'));
    t.ok(rearmed, 'an edit re-armed the fraction: fires for the new version');
    t.equal(await store.claim(alert(id, 'd2')), null, 'once');
    t.equal(await store.claim(alert(id, 'd1')), null, 'the first version: not again');
    t.equal(await pre007(db, id), null, 'the older release: still fired');
    await store.finish(rearmed!, 'delivered', []);
    const listed = await store.list(id, 10);
    t.same(listed.map((r) => [r.threshold, r.status]).sort(), [[0.5, 'delivered'], [0.5, 'fired']], 'both versions listed, the re-armed one\'s outcome recorded');
    t.equal((await db.query('SELECT * FROM budget_alerts WHERE budget_id = $1', [id])).rows.length, 2, 'the older release\'s SELECT sees both');
    t.ok(await pre007(db, id, 1), 'a fraction no release fired: the older release fires it');
    t.equal(await store.claim(alert(id, 'd2', 1)), null, 'and this release counts it fired for every version');
  });

  t.test('the 007 release beside this one: it records a window\'s first version; a re-armed one is left to this release', async (t) => {
    const id = randomUUID();
    t.ok(await release007(db, alert(id, 'd1')));
    t.equal(await store.claim(alert(id, 'd1')), null);
    t.equal(await release007(db, alert(id, 'd1')), null);
    await t.rejects(release007(db, alert(id, 'd2')), 'its insert breaks the first-per-window key: it warns and retries, sending nothing');
    t.ok(await store.claim(alert(id, 'd2')), 'this release fires it');
  });
}

t.test('PGlite', async (t) => {
  const db = await openDatabase({ dataDir: null });
  t.teardown(() => db.close());
  await suite(t, db);
});

t.test('Postgres', async (t) => {
  const pg = await createTestDatabase();
  const db = await openDatabase({ url: pg.url });
  t.teardown(async () => {
    await db.close();
    await pg.drop();
  });
  await suite(t, db);
});
