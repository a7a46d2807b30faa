import t from 'tap';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../../core/db/open.ts';
import type { Database } from '../../core/db/types.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import plugin from '../../plugins/log-postgres/index.ts';
import { usageBackendSuite } from '../support/usage-backend-suite.ts';
import { usageEvent } from '../support/observer-fixtures.ts';

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
  await plugin.register(relay as never, { url: PG_URL, table, poolSize: 2 });
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
  t.equal(rows[0].n, 1);
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
