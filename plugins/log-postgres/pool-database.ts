// A connection of the plugin's own (option `url`), when usage events go to another Postgres
// than Relay's catalog database: the kernel's bounded pool, so a server that accepts connections
// and never answers fails each query past its deadline and frees the connection it held.
import { createPgPool, type PgPool } from '../../core/plugin-api/log-backends.ts';

export type PoolDatabase = PgPool;

export interface PoolTimeouts {
  /** Deadline of one query (the migration excepted). Default the kernel's, 30 000. */
  queryTimeoutMs?: number;
  /** Deadline of opening a connection or waiting for a free one. Default 5 000. */
  connectTimeoutMs?: number;
}

export function poolDatabase(url: string, max = 4, timeouts: PoolTimeouts = {}): PoolDatabase {
  return createPgPool(url, { max, ...timeouts });
}
