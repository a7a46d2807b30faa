// log-postgres's own pool against a Postgres that accepts connections and never answers (a proxy
// in front of the real server): a write fails within the pool's deadlines instead of holding a
// connection for good, the stalled connections leave the pool, and once the server answers again
// the next write reconnects. A migration is not held to the query deadline (it may wait for
// another instance's migration, or build an index on a big table).
import t from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { postgresBehindProxy } from '../support/postgres-behind-proxy.ts';
import { usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

// The deadlines under test, short so the test is quick; a hang is told by waiting far longer.
const TIMEOUTS = { queryTimeoutMs: 300, connectTimeoutMs: 300 };
const BOUND_MS = 10_000;

const { directUrl, url: viaProxy, proxy, storedIds } = await postgresBehindProxy(t);


t.test('a server that goes silent mid-conversation: writes fail past the query deadline, and the next write after it answers goes through', async (t) => {
  proxy.answer();
  const db = poolDatabase(viaProxy, 2, TIMEOUTS);
  // Held connections first: without deadlines the pool's end() would wait for them.
  t.teardown(async () => { proxy.dropHeld(); await db.close(); });
  const table = `usage_hang_${randomBytes(4).toString('hex')}`;
  const backend = new PostgresUsageBackend({ db, table });
  const first = usageEvent();
  await backend.write([first]);

  proxy.stall();
  // More writes than the pool has connections: each one would hold a connection for good.
  const stalled = [usageEvent(), usageEvent(), usageEvent()].map((e) => backend.write([e]));
  t.same(await Promise.all(stalled.map((w) => settlesWithin(w, BOUND_MS))), ['rejected', 'rejected', 'rejected'],
    'each write fails (the queue retries it) instead of hanging');
  t.equal(await settlesWithin(db.transaction((tx) => tx.query('SELECT 1')), BOUND_MS), 'rejected', 'a transaction too');

  proxy.answer();
  const after = usageEvent();
  t.equal(await settlesWithin(backend.write([after]), BOUND_MS), 'resolved', 'the server answers again: the next write reconnects');
  t.same(await storedIds(table), [first.request_id, after.request_id].sort(), 'the rows the server received');
});

t.test('a server that accepts a connection and never answers it: a write fails within the connect deadline, then reconnects', async (t) => {
  proxy.hang();
  const db = poolDatabase(viaProxy, 2, TIMEOUTS);
  // Held connections first: without deadlines the pool's end() would wait for them.
  t.teardown(async () => { proxy.dropHeld(); await db.close(); });
  const table = `usage_hang_${randomBytes(4).toString('hex')}`;
  const backend = new PostgresUsageBackend({ db, table });
  t.equal(await settlesWithin(backend.write([usageEvent()]), BOUND_MS), 'rejected', 'no answer to the handshake: the write fails');
  proxy.answer();
  const later = usageEvent();
  t.equal(await settlesWithin(backend.write([later]), BOUND_MS), 'resolved');
  t.same(await storedIds(table), [later.request_id]);
});

t.test('a migration waits past the query deadline (another instance holds the migration lock)', async (t) => {
  proxy.answer();
  const table = `usage_hang_${randomBytes(4).toString('hex')}`;
  const other = new pg.Client({ connectionString: directUrl });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('BEGIN');
  await other.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`relay_log_postgres:${table}`]);
  const db = poolDatabase(directUrl, 2, TIMEOUTS);
  t.teardown(() => db.close());
  const migrated = new PostgresUsageBackend({ db, table }).init();
  // Several query deadlines, then the other instance's migration ends.
  await new Promise((resolve) => setTimeout(resolve, 4 * TIMEOUTS.queryTimeoutMs));
  await other.query('COMMIT');
  t.equal(await settlesWithin(migrated, BOUND_MS), 'resolved', 'the migration waited for the lock, not cut at the query deadline');
  t.equal(await settlesWithin(db.query('SELECT pg_sleep(1)'), BOUND_MS), 'rejected', 'while a plain query is held to it');
});
