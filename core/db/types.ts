// One small interface over Postgres (pg) and embedded PGlite, so the store has one code path.

export interface QueryResult<T> {
  rows: T[];
  affectedRows?: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface TransactionOptions {
  /**
   * Its statements may run past the query deadline: migrations (an index build on a big table, or
   * a wait for another instance's migration). Its BEGIN keeps the deadline.
   */
  unbounded?: boolean;
}

export interface QueryOptions {
  /**
   * Ends the query when aborted, rejecting with the signal's reason. On Postgres the query runs on
   * a connection of its own, closed on abort: a query on the wire cannot be withdrawn otherwise
   * (a cancel request needs an answer from the same server), and the server rolls back what it had
   * not committed once it notices. PGlite runs in-process and is only checked before the query.
   */
  signal?: AbortSignal;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** As Queryable.query; a query outside a transaction may be given a signal that ends it. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  /** Runs `fn` in a transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Subscribes to a NOTIFY channel. `onReconnect` runs after the listening connection was
   * lost and re-established (notifications may have been missed: rebuild what depends on them).
   */
  listen(channel: string, onNotify: (payload: string) => void, onReconnect?: () => void): Promise<void>;
  /** Resolves when the database answers; rejects when it does not (bounded in time). */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}
