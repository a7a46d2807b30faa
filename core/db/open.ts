import path from 'node:path';
import type { Logger } from 'pino';
import { PgliteDatabase } from './pglite.ts';
import { PostgresDatabase } from './postgres.ts';
import type { Database } from './types.ts';

export interface OpenDatabaseOptions {
  /** A postgres:// URL; when unset, embedded PGlite is used. */
  url?: string;
  /** PGlite's data directory parent (the database lives in `<dataDir>/pglite`); null keeps it in memory. */
  dataDir?: string | null;
  log?: Logger;
  /** Deadline of one Postgres query (migrations excepted); PGlite has none. */
  queryTimeoutMs?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url) return new PostgresDatabase(options.url, options.log, { queryTimeoutMs: options.queryTimeoutMs });
  return PgliteDatabase.open(options.dataDir ? path.join(options.dataDir, 'pglite') : null);
}
