// Database over embedded PGlite (Postgres compiled to WASM, in-process): the default when
// DATABASE_URL is unset, so a first start needs no server.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { Database, QueryOptions, QueryResult, Queryable } from './types.ts';
import { lockEmbeddedDir, type LockEvents } from './embedded-lock.ts';
import { removeHolder } from './embedded-holder.ts';

// Postgres's memory inside PGlite's WebAssembly memory, which never shrinks: whatever Postgres
// touches once stays resident for the life of the process. Relay's catalog is a few MB, so the
// server defaults (128 MB of shared buffers, 64 MB of maintenance memory) only cost RSS.
const MEMORY_SETTINGS = ['-c', 'shared_buffers=8MB', '-c', 'maintenance_work_mem=8MB', '-c', 'work_mem=2MB', '-c', 'temp_buffers=2MB'];

const START_PARAMS = [...PGlite.defaultStartParams, ...MEMORY_SETTINGS];

/**
 * Creates a new data directory (initdb) in a short-lived child process: PGlite runs initdb in a
 * second instance whose memory (~450 MB) this process would otherwise keep resident for good.
 */
async function initializeDataDir(dataDir: string): Promise<void> {
  const script = `const { PGlite } = await import(${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))});
    const db = await PGlite.create(${JSON.stringify({ dataDir, startParams: START_PARAMS })});
    await db.close();`;
  try {
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' } });
  } catch (err) {
    throw new Error(`embedded database: creating ${dataDir} failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
  }
}

export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;

  private constructor(private readonly db: PGlite, private readonly releaseLock: (() => Promise<void>) | null) {}

  /** Opens `dataDir` under its lock (held until close), or an in-memory database when null. */
  static async open(dataDir: null): Promise<PgliteDatabase>;
  static async open(dataDir: string | null, lockEvents: LockEvents): Promise<PgliteDatabase>;
  static async open(dataDir: string | null, lockEvents?: LockEvents): Promise<PgliteDatabase> {
    if (!dataDir) return new PgliteDatabase(await PGlite.create({ startParams: START_PARAMS }), null);
    if (!lockEvents) throw new TypeError(`PgliteDatabase.open(${JSON.stringify(dataDir)}): a data directory needs its lock events`);
    mkdirSync(dataDir, { recursive: true });
    const release = await lockEmbeddedDir(dataDir, lockEvents);
    try {
      // A record left by a killed holder names a control port that is no longer its.
      removeHolder(dataDir);
      if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initializeDataDir(dataDir);
      return new PgliteDatabase(await PGlite.create({ dataDir, startParams: START_PARAMS }), release);
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
  }

  async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>> {
    // In-process: no connection to hang on, and a running query cannot be stopped.
    options?.signal?.throwIfAborted();
    const res = await this.db.query<T>(sql, params as unknown[]);
    return { rows: res.rows, affectedRows: res.affectedRows };
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => fn({
      query: async <R>(sql: string, params?: unknown[]) => {
        const res = await tx.query<R>(sql, params as unknown[]);
        return { rows: res.rows, affectedRows: res.affectedRows };
      },
      exec: async (sql: string) => {
        await tx.exec(sql);
      },
    }));
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<void> {
    // In-process: no connection to lose, so no reconnect callback is ever due.
    await this.db.listen(channel, onNotify);
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } finally {
      // Rejects when the lock was lost meanwhile (reported then): nothing is left to release.
      await this.releaseLock?.().catch(() => undefined);
    }
  }
}
