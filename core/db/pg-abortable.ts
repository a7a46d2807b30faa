// A pg query that an AbortSignal ends. Postgres withdraws a query on the wire only through a
// cancel request on a second connection, which a server that stopped answering ignores too; so
// the query gets a connection of its own from the pool, and an abort closes that connection
// (released with an error, the pool ends it; pg destroys the socket of a client with a query in
// flight). The server rolls back what it had not committed when it notices.
import type pg from 'pg';

/** Runs `config` on a pool connection of its own, closed if `signal` aborts first; rejects with the signal's reason then. */
export async function abortableQuery(pool: pg.Pool, config: pg.QueryConfig, signal: AbortSignal): Promise<pg.QueryResult> {
  signal.throwIfAborted();
  const client = await connectUnlessAborted(pool, signal);
  let released = false;
  const release = (destroy: boolean) => {
    if (released) return;
    released = true;
    client.release(destroy);
  };
  const onAbort = () => release(true);
  // An error on a checked-out client has no pool listener: without this one it would crash the process.
  const onError = () => release(true);
  signal.addEventListener('abort', onAbort, { once: true });
  client.on('error', onError);
  try {
    const result = await client.query(config);
    release(false);
    return result;
  } catch (err) {
    // As pool.query does: a client whose query failed leaves the pool.
    release(true);
    throw signal.aborted ? signal.reason : err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    client.off('error', onError);
  }
}

/** A pool connection, or the signal's reason once it aborts (a connection that arrives later goes back to the pool). */
function connectUnlessAborted(pool: pg.Pool, signal: AbortSignal): Promise<pg.PoolClient> {
  return new Promise<pg.PoolClient>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    pool.connect().then((client) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) client.release();
      else resolve(client);
    }, (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted ? signal.reason : err);
    });
  });
}
