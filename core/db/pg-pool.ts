// A pg pool bounded for a server that accepts connections and never answers: a connection (and a
// wait for a free one) within connectTimeoutMs, each query within queryTimeoutMs (pg's
// query_timeout; a client whose query timed out is dropped, not returned to the pool), and TCP
// keepalive so a peer that vanished is noticed. A transaction may opt out of the query deadline
// (`unbounded`: migrations wait for another instance's and may build an index on a big table);
// its BEGIN keeps it, so a silent server still fails it. A query given an AbortSignal ends at its
// abort (pg-abortable.ts).
import pg from 'pg';
import { abortableQuery } from './pg-abortable.ts';
import type { QueryOptions, Queryable, QueryResult, TransactionOptions } from './types.ts';

/** Deadline of one query, by default (config database.queryTimeoutMs, log-postgres's queryTimeoutMs). */
export const QUERY_TIMEOUT_MS = 30_000;

export interface PgPoolOptions {
  max: number;
  /** Deadline of one query, from when it is queued on its connection. Default QUERY_TIMEOUT_MS. */
  queryTimeoutMs?: number;
  /** Deadline of opening a connection, or of waiting for a free one. Default 5 000. */
  connectTimeoutMs?: number;
  /** Idle connections are closed after this long. Default 30 000. */
  idleTimeoutMs?: number;
  /** An idle connection's error (a server restart): must not crash Relay, the next query reconnects. */
  onIdleError?: (err: Error) => void;
}

/** The pool as the Database interface's query side. */
export interface PgPool extends Queryable {
  /** As Queryable.query; with a signal, on a connection of its own that an abort closes (pg-abortable.ts). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

/** TCP keepalive's first probe after this much idle time (the OS default is two hours). */
export const KEEPALIVE_DELAY_MS = 10_000;

/** pg's message when query_timeout passes (it has no code). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** A query config with pg's per-query deadline (@types/pg leaves query_timeout out of QueryConfig). */
function timed(text: string, values: unknown[] | undefined, timeoutMs: number | null): pg.QueryConfig & { query_timeout?: number } {
  return timeoutMs === null ? { text, values } : { text, values, query_timeout: timeoutMs };
}

function queryable(client: pg.Pool | pg.PoolClient, timeoutMs: number | null): Queryable {
  return {
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const res = await client.query(timed(sql, params, timeoutMs));
      return { rows: res.rows as T[], affectedRows: res.rowCount ?? undefined };
    },
    async exec(sql: string): Promise<void> {
      await client.query(timed(sql, undefined, timeoutMs));
    },
  };
}

export function createPgPool(url: string, options: PgPoolOptions): PgPool {
  const pool = new pg.Pool({
    connectionString: url, max: options.max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  });
  pool.on('error', options.onIdleError ?? (() => {}));
  const deadline = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  const plain = queryable(pool, deadline);
  return {
    ...plain,
    async query<T>(sql: string, params?: unknown[], queryOptions?: QueryOptions): Promise<QueryResult<T>> {
      if (!queryOptions?.signal) return plain.query<T>(sql, params);
      const res = await abortableQuery(pool, timed(sql, params, deadline), queryOptions.signal);
      return { rows: res.rows as T[], affectedRows: res.rowCount ?? undefined };
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>, txOptions?: TransactionOptions): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query(timed('BEGIN', undefined, deadline));
        const result = await fn(queryable(client, txOptions?.unbounded ? null : deadline));
        await client.query(timed('COMMIT', undefined, deadline));
        return result;
      } catch (err) {
        // Still waiting on a silent server: a ROLLBACK would wait behind it; closing it rolls back.
        if ((err as Error | null)?.message === QUERY_TIMEOUT_MESSAGE) broken = err as Error;
        else await client.query(timed('ROLLBACK', undefined, deadline)).catch((rollbackErr: Error) => { broken = rollbackErr; });
        throw err;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
