import t from 'tap';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../../core/db/open.ts';
import type { Database } from '../../core/db/types.ts';
import type { UsageEvent } from '../../core/plugin-api.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import plugin from '../../plugins/log-postgres/index.ts';
import { usageBackendSuite } from '../support/usage-backend-suite.ts';
import { scheduleRetention, sweepExpired } from '../../plugins/log-postgres/retention.ts';
import { eventually } from '../../core/testing.ts';
import { Registry } from 'prom-client';
import { createObserver } from '../../core/observer/observer.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const PG_URL = process.env.RELAY_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const uniqueTable = () => `usage_test_${randomBytes(4).toString('hex')}`;

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

t.test('conformance on Postgres (relay.db through openDatabase)', async (t) => {
  if (!(await postgresReachable())) { t.plan(0, `no Postgres at ${PG_URL} (set RELAY_TEST_DATABASE_URL)`); return; }
  usageBackendSuite(t, async () => {
    const db = await openDatabase({ url: PG_URL });
    const table = uniqueTable();
    const backend = new PostgresUsageBackend({ db, table });
    return {
      backend,
      cleanup: async () => {
        await db.query(`DROP TABLE IF EXISTS ${table}`);
        await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
        await db.close();
      },
    };
  });
});

t.test('conformance on PGlite', async (t) => {
  usageBackendSuite(t, async () => {
    const db = await openDatabase({ dataDir: null });
    const backend = new PostgresUsageBackend({ db, table: 'relay_usage_events' });
    return { backend, cleanup: () => db.close() };
  });
});

t.test('own pool (url option): retried batches do not duplicate; migrations run once', async (t) => {
  if (!(await postgresReachable())) { t.plan(0, `no Postgres at ${PG_URL}`); return; }
  const table = uniqueTable();
  const backends: PostgresUsageBackend[] = [];
  const relay = {
    db: null, log: { error() {} },
    hooks: { addUsageBackend: (b: PostgresUsageBackend) => backends.push(b) },
  };
  await plugin.register(relay as never, { url: PG_URL, table, poolSize: 2, retentionDays: 0, queryTimeoutMs: 30_000 });
  const backend = backends[0];
  t.equal(backend.id, 'postgres');
  const batch = Array.from({ length: 700 }, () => usageEvent());
  await backend.write(batch);
  await backend.write(batch.slice(0, 100)); // a retry after a lost acknowledgement
  const summary = await backend.summary({});
  t.equal(summary.totals.requests, 700, 'each event stored once');
  // Two instances starting at once migrate once.
  const db = poolDatabase(PG_URL, 3);
  await Promise.all([new PostgresUsageBackend({ db, table }).init(), new PostgresUsageBackend({ db, table }).init()]);
  const { rows } = await db.query('SELECT count(*)::int AS n FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
  t.equal(rows[0].n, 3, 'each of the three schema versions once');
  const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT * FROM ${table} WHERE policy_id = 'p' ORDER BY started_at DESC LIMIT 10`);
  t.ok(plan.rows.length > 0);
  await db.query(`DROP TABLE ${table}`);
  await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
  await db.close();
  await backend.close();
});

t.test('a database that is down: writes reject (the queue retries), and succeed once it is back', async (t) => {
  const failing: Pick<Database, 'query' | 'transaction'> = {
    query: async () => { throw new Error('connection refused'); },
    transaction: async () => { throw new Error('connection refused'); },
  };
  const backend = new PostgresUsageBackend({ db: failing, table: 'relay_usage_events' });
  await t.rejects(backend.write([usageEvent()]), /connection refused/);
  await t.rejects(backend.write([usageEvent()]), /connection refused/, 'migration is tried again, not stuck');
});

t.test('a row the table cannot hold (PGlite): only it is dropped and logged; the rest of its batch is written', async (t) => {
  const db = await openDatabase({ dataDir: null });
  t.teardown(() => db.close());
  const logged: Array<{ obj: { request_id?: string }; msg: string }> = [];
  const backend = new PostgresUsageBackend({ db, table: 'relay_usage_events', log: { error: (obj, msg) => logged.push({ obj, msg }) } });
  const bad = usageEvent({ input_tokens: 1e20 });
  const good = [usageEvent(), usageEvent()];
  await backend.write([good[0]!, bad, good[1]!]);
  for (const event of good) t.ok(await backend.get(event.request_id), 'the other rows of the batch are written');
  t.equal(await backend.get(bad.request_id), null);
  t.same(logged.map((l) => l.obj.request_id), [bad.request_id], 'the dropped row is logged by its request id');
  const refusal = (events: UsageEvent[]) => backend.write(events).then(() => null, (err: unknown) => err);
  t.match(await refusal([usageEvent({ output_tokens: 1e20 })]), { retryable: false }, 'a batch of none that fit is refused, not retried');
  t.match(await refusal([usageEvent({ status: 70_000 })]), { retryable: false }, 'any column out of range (smallint here)');
});

t.test('rows the table cannot hold, in a batch that is otherwise written, are counted in relay_log_events_dropped_total', async (t) => {
  const db = await openDatabase({ dataDir: null });
  t.teardown(() => db.close());
  const registry = new Registry();
  const observer = createObserver({ settings: testSettings({ 'usage-logging': { backend: 'postgres' } }), log: silentLog, metrics: registry, queue: { maxDelayMs: 1 } });
  const backend = new PostgresUsageBackend({ db, table: 'relay_usage_events', log: silentLog });
  observer.addUsageBackend(backend);
  for (const event of [usageEvent(), usageEvent({ input_tokens: 1e20 }), usageEvent(), usageEvent({ status: 70_000 })]) observer.record(event, null);
  await observer.flush();
  const text = await registry.metrics();
  t.match(text, /relay_log_events_dropped_total\{kind="usage",backend="postgres",reason="rejected"\} 2/, 'the two bad rows, as a batch of none that fit is counted');
  t.match(text, /relay_log_events_written_total\{kind="usage",backend="postgres"\} 2/, 'only the rows written count as written');
  t.equal(observer.stats().usage.postgres!.droppedByReason.rejected, 2);
  t.equal(observer.stats().usage.postgres!.written, 2);
  await observer.close();
});

/** `old` events started `daysAgo` days ago and `fresh` ones now, written through the backend. */
async function seedAges(backend: PostgresUsageBackend, old: number, fresh: number, daysAgo: number): Promise<void> {
  const past = new Date(Date.now() - daysAgo * 86_400_000).toISOString();
  await backend.write([
    ...Array.from({ length: old }, () => usageEvent({ started_at: past })),
    ...Array.from({ length: fresh }, () => usageEvent()),
  ]);
}

const count = async (db: Pick<Database, 'query'>, table: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

t.test('retention: rows past the cutoff are deleted in batches, the rest kept (PGlite and Postgres)', async (t) => {
  const targets: Array<[string, () => Promise<{ db: Database; table: string; cleanup: () => Promise<void> }>]> = [
    ['PGlite', async () => {
      const db = await openDatabase({ dataDir: null });
      return { db, table: 'relay_usage_events', cleanup: () => db.close() };
    }],
  ];
  if (await postgresReachable()) {
    targets.push(['Postgres', async () => {
      const db = await openDatabase({ url: PG_URL });
      const table = uniqueTable();
      return {
        db, table,
        cleanup: async () => {
          await db.query(`DROP TABLE IF EXISTS ${table}`);
          await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
          await db.close();
        },
      };
    }]);
  }
  for (const [name, open] of targets) {
    const { db, table, cleanup } = await open();
    try {
      const backend = new PostgresUsageBackend({ db, table });
      await seedAges(backend, 23, 7, 40);
      const cutoff = new Date(Date.now() - 30 * 86_400_000);
      t.same(await sweepExpired(db, table, cutoff, 5), { deleted: 23, swept: true }, `${name}: 23 old rows in batches of 5`);
      t.equal(await count(db, table), 7, `${name}: the recent rows are kept`);
      t.same(await sweepExpired(db, table, cutoff, 5), { deleted: 0, swept: true }, `${name}: a second sweep finds nothing`);
      // A stop between batches ends the sweep after the batch in progress.
      await seedAges(backend, 12, 0, 40);
      let batches = 0;
      const stopped = await sweepExpired(db, table, cutoff, 5, () => batches++ >= 1);
      t.same(stopped, { deleted: 5, swept: true }, `${name}: stopped after one batch`);
      t.equal(await count(db, table), 14, `${name}: the rest waits for the next sweep`);
    } finally {
      await cleanup();
    }
  }
});

t.test('retention: one instance sweeps at a time; the other leaves it', async (t) => {
  if (!(await postgresReachable())) { t.plan(0, `no Postgres at ${PG_URL}`); return; }
  const table = uniqueTable();
  const db = poolDatabase(PG_URL, 3);
  t.teardown(async () => {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
    await db.close();
  });
  const backend = new PostgresUsageBackend({ db, table });
  await seedAges(backend, 10, 3, 40);
  // Another instance holds the sweep's lock (inside its own transaction).
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => { locked = r; });
  const holder = db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`relay_log_postgres_retention:${table}`]);
    locked();
    await held;
  });
  await isLocked;
  const cutoff = new Date(Date.now() - 30 * 86_400_000);
  t.same(await sweepExpired(db, table, cutoff, 100), { deleted: 0, swept: false }, 'the lock is taken: this instance does not sweep');
  release();
  await holder;
  t.same(await sweepExpired(db, table, cutoff, 100), { deleted: 10, swept: true }, 'free again: it sweeps');
});

t.test('retention on a timer: the plugin option sweeps, logs the count, and stops on close', async (t) => {
  const db = await openDatabase({ dataDir: null });
  t.teardown(() => db.close());
  const backend = new PostgresUsageBackend({ db, table: 'relay_usage_events' });
  await seedAges(backend, 4, 2, 10);
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const log = { info: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }), warn: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
  let prepared = 0;
  // The first preparation fails (the table's migration, say): that sweep is skipped and logged.
  const prepare = async () => {
    if (++prepared === 1) throw new Error('database not ready');
  };
  const stop = scheduleRetention({ db, table: 'relay_usage_events', retentionDays: 7, batchSize: 3, intervalMs: 50, firstSweepMs: 10, log, prepare });
  await eventually(async () => (await count(db, 'relay_usage_events')) === 2, 5000, 20);
  t.match(lines[0], { msg: /the retention sweep failed/ }, 'a failed preparation is logged');
  t.match(lines[1], { msg: 'log-postgres: deleted usage rows past retention', obj: { deleted: 4 } }, 'the next sweep deletes and logs the count');
  await stop();
  const logged = lines.length;
  await seedAges(backend, 3, 0, 10);
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await count(db, 'relay_usage_events'), 5, 'no sweep after stop');
  t.equal(lines.length, logged, 'nothing more logged');
  t.equal(plugin.options?.properties.retentionDays.default, 0, 'the option keeps everything unless set');
});

t.test('a table made at schema version 2 gains the request id columns', async (t) => {
  if (!(await postgresReachable())) { t.plan(0, `no Postgres at ${PG_URL}`); return; }
  const table = uniqueTable();
  const db = poolDatabase(PG_URL, 2);
  await new PostgresUsageBackend({ db, table }).init();
  // Back to version 2 as an older Relay left it.
  await db.query(`ALTER TABLE ${table} DROP COLUMN client_request_id, DROP COLUMN upstream_request_id`);
  await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1 AND version = 3', [table]);
  const backend = new PostgresUsageBackend({ db, table });
  await backend.init();
  const event = usageEvent({ client_request_id: 'client-7', upstream_request_id: 'req_up_7' });
  await backend.write([event]);
  t.same(await backend.get!(event.request_id), event, 'written and read back with both ids');
  await db.query(`DROP TABLE ${table}`);
  await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
  await db.close();
});
