import path from 'node:path';
import type { Logger } from 'pino';
import { PgliteDatabase } from './pglite.ts';
import { LOCK_STALE_MS } from './embedded-lock.ts';
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

/** Where PGlite keeps the embedded database of a data directory. */
export function embeddedDatabaseDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { log } = options;
  if (options.url) return new PostgresDatabase(options.url, log, { queryTimeoutMs: options.queryTimeoutMs });
  const dir = options.dataDir ? embeddedDatabaseDir(options.dataDir) : null;
  return PgliteDatabase.open(dir, {
    onWait: () => log?.info({ dir }, `the embedded database is locked by another process: waiting up to ${LOCK_STALE_MS / 1000} s to see whether it is alive (a lock left by a killed one goes stale)`),
    // Logged, not thrown: the database stays open and this process keeps serving.
    onLost: (err) => {
      const message = `the lock on the embedded database ${dir} was lost (${err.message}): another Relay or relay CLI command may now open it; stop them, or restart this one`;
      if (log) log.error({ dir }, message);
      else process.stderr.write(`relay: ${message}\n`);
    },
  });
}
