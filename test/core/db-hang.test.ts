// Relay's own Postgres (openDatabase, as relay.ts opens it) against a server that goes silent
// mid-conversation (a proxy in front of the real one stops forwarding): queries and transactions
// fail past database.queryTimeoutMs instead of holding pool connections for good, and work again
// once it answers. Migrations are not held to that deadline (another instance's, a big table).
import t from 'tap';
import pg from 'pg';
import { openDatabase } from '../../core/db/open.ts';
import { migrate } from '../../core/db/migrate.ts';
import { postgresBehindProxy } from '../support/postgres-behind-proxy.ts';
import { settlesWithin } from '../support/settles-within.ts';

const QUERY_TIMEOUT_MS = 300;
const BOUND_MS = 10_000;
/** core/db/migrate.ts's advisory lock. */
const MIGRATION_LOCK_ID = 4_242_001;

const { directUrl, url: viaProxy, proxy } = await postgresBehindProxy(t);

t.test('a silent server: queries and transactions fail past the deadline, and work again once it answers', async (t) => {
  const db = await openDatabase({ url: viaProxy, queryTimeoutMs: QUERY_TIMEOUT_MS });
  t.teardown(async () => { proxy.dropHeld(); await db.close(); });
  t.same((await db.query<{ n: number }>('SELECT 1 AS n')).rows, [{ n: 1 }]);
  // Two connections open and idle, so the transaction below runs on one the server left silent.
  await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);

  proxy.stall();
  t.equal(await settlesWithin(db.query('SELECT 1'), BOUND_MS), 'rejected', 'a query fails instead of hanging');
  t.equal(await settlesWithin(db.transaction((tx) => tx.query('SELECT 1')), BOUND_MS), 'rejected', 'and a transaction');

  proxy.answer();
  const again = db.query<{ n: number }>('SELECT 2 AS n');
  t.equal(await settlesWithin(again, BOUND_MS), 'resolved', 'the server answers again');
  t.same((await again).rows, [{ n: 2 }]);
});

t.test('migrations wait past the query deadline for another instance\'s migration', async (t) => {
  const db = await openDatabase({ url: directUrl, queryTimeoutMs: QUERY_TIMEOUT_MS });
  t.teardown(() => db.close());
  const other = new pg.Client({ connectionString: directUrl });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('BEGIN');
  await other.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
  const migrated = migrate(db, [{ version: 1, name: '001_slow', sql: 'SELECT pg_sleep(0.5)' }]);
  await new Promise((resolve) => setTimeout(resolve, 4 * QUERY_TIMEOUT_MS));
  await other.query('COMMIT');
  t.equal(await settlesWithin(migrated, BOUND_MS), 'resolved', 'the lock wait and a statement longer than the deadline both ran');
  t.same(await migrated, ['001_slow']);
  t.equal(await settlesWithin(db.query('SELECT pg_sleep(1)'), BOUND_MS), 'rejected', 'while a plain query is held to it');
});
