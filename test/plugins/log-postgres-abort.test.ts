// log-postgres honours the queue's abort: an insert to a Postgres gone silent (a proxy in front of
// the real server stops forwarding) ends at the write deadline, its connection closed, so the retry
// writes the batch once the server answers, without waiting for the query's own deadline; and
// close() past its deadline ends the insert, so the pool's end follows at once.
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { postgresBehindProxy } from '../support/postgres-behind-proxy.ts';
import { usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** The pool's own deadlines: far beyond the test, so only the abort can end a call. */
const POOL_TIMEOUTS = { queryTimeoutMs: 600_000, connectTimeoutMs: 600_000 };
/** The queue's write deadline, where it aborts the call. */
const WRITE_TIMEOUT_MS = 500;
/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;

const { directUrl, url: viaProxy, proxy, storedIds } = await postgresBehindProxy(t);


/** Polls `check` every 10 ms for up to BOUND_MS. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < BOUND_MS / 10 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

async function setUp(t: Test) {
  proxy.answer();
  const db = poolDatabase(viaProxy, 2, POOL_TIMEOUTS);
  t.teardown(async () => { proxy.dropHeld(); await db.close().catch(() => {}); });
  const table = `usage_abort_${randomBytes(4).toString('hex')}`;
  const backend = new PostgresUsageBackend({ db, table });
  await backend.init();
  return { db, table, backend };
}

t.test('an insert hung past the write deadline is ended by the abort, and the retry writes the batch once the server answers', async (t) => {
  const { table, backend } = await setUp(t);
  const retried: unknown[] = [];
  const queue = createBatchQueue<UsageEvent>({
    name: 'usage:postgres', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: WRITE_TIMEOUT_MS,
    retry: { initialBackoffMs: 50, maxBackoffMs: 50, maxRetryMs: 60_000 },
    write: (batch, options) => backend.write(batch, options),
    // The server answers again as soon as the first attempt failed: only the hung call stands in the way.
    onRetry: (_, err) => { retried.push(err); proxy.answer(); },
  });
  t.teardown(() => queue.close(100));
  const before = usageEvent();
  queue.push(before);
  t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved');

  // The pool's idle connection goes silent: the next insert is sent on it and never answered.
  proxy.stall();
  const hung = usageEvent();
  queue.push(hung);
  t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved', 'the batch is written without waiting for the hung insert\'s own deadline');
  t.match(retried, [{ name: 'WriteTimedOut' }], 'one attempt timed out, and the retry succeeded');
  t.same(await storedIds(table), [before.request_id, hung.request_id].sort(), 'both rows are stored, once');
  t.equal(queue.stats().written, 2);
  t.equal(queue.stats().dropped, 0);
});

t.test('close() past its deadline ends the hung insert, so the pool ends at once', async (t) => {
  const { db, backend } = await setUp(t);
  const queue = createBatchQueue<UsageEvent>({
    name: 'usage:postgres', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 600_000,
    write: (batch, options) => backend.write(batch, options),
  });
  proxy.stall();
  queue.push(usageEvent());
  await until(() => proxy.held().includes('INSERT INTO'));
  t.ok(proxy.held().includes('INSERT INTO'), 'the insert was sent to the silent server');
  t.equal(await settlesWithin(queue.close(500), BOUND_MS), 'resolved', 'close() ends at its deadline');
  t.same(queue.stats().droppedByReason.close_deadline, 1, 'the event is counted as lost at shutdown');
  t.equal(await settlesWithin(db.close(), BOUND_MS), 'resolved', 'the pool ends: the insert\'s connection was closed, not left checked out');
});
