// Database.query with an AbortSignal (what a log backend's write is given): on Postgres the query
// runs on a connection of its own that an abort closes, so a query to a server gone silent ends at
// the abort, long before its own deadline, and the pool goes on with fresh connections once the
// server answers. PGlite, in-process, refuses a query whose signal is already aborted.
import t from 'tap';
import { openDatabase } from '../../core/db/open.ts';
import { postgresBehindProxy } from '../support/postgres-behind-proxy.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** The query deadline: far beyond the test, so only the abort can end a query. */
const QUERY_TIMEOUT_MS = 600_000;
/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;

const { directUrl, url: viaProxy, proxy } = await postgresBehindProxy(t);

t.test('Postgres gone silent: an aborted query ends with the signal\'s reason, its connection leaves the pool, and the next query reconnects', async (t) => {
  proxy.answer();
  const db = await openDatabase({ url: viaProxy, queryTimeoutMs: QUERY_TIMEOUT_MS });
  t.teardown(async () => { proxy.dropHeld(); await db.close(); });
  const controller = new AbortController();
  t.same((await db.query<{ n: number }>('SELECT 1 AS n', [], { signal: controller.signal })).rows, [{ n: 1 }], 'a query with a signal answers as any');

  proxy.stall();
  const hung = db.query('SELECT 2', [], { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const reason = new Error('given up');
  controller.abort(reason);
  const outcome = hung.then(() => 'answered', (err: unknown) => err);
  t.equal(await settlesWithin(outcome, BOUND_MS), 'resolved', 'the abort ends the query');
  t.equal(await Promise.race([outcome, new Promise((r) => setTimeout(r, 100, 'still running'))]), reason, 'with the signal\'s reason');

  proxy.answer();
  const again = db.query<{ n: number }>('SELECT 3 AS n', [], { signal: new AbortController().signal });
  t.equal(await settlesWithin(again, BOUND_MS), 'resolved', 'the next query goes out on a fresh connection');
  t.same((await again).rows, [{ n: 3 }]);
  t.equal(await settlesWithin(db.close(), BOUND_MS), 'resolved', 'and the pool ends: no connection is left checked out');
});

t.test('a signal aborted before the query: refused at once, on Postgres and on PGlite', async (t) => {
  const aborted = AbortSignal.abort(new Error('too late'));
  const pgDb = await openDatabase({ url: directUrl });
  t.teardown(() => pgDb.close());
  await t.rejects(pgDb.query('SELECT 1', [], { signal: aborted }), { message: 'too late' }, 'Postgres');
  const lite = await openDatabase({});
  t.teardown(() => lite.close());
  await t.rejects(lite.query('SELECT 1', [], { signal: aborted }), { message: 'too late' }, 'PGlite');
  t.same((await lite.query<{ n: number }>('SELECT 1 AS n', [], { signal: new AbortController().signal })).rows, [{ n: 1 }], 'and answers with a live one');
});
