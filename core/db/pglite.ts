// Database over embedded PGlite (Postgres compiled to WASM, in-process): the default when
// DATABASE_URL is unset, so a first start needs no server.
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { Database, QueryResult, Queryable } from './types.ts';

export class PgliteDatabase implements Database {
  readonly kind = 'pglite' as const;

  private constructor(private readonly db: PGlite) {}

  static async open(dataDir: string | null): Promise<PgliteDatabase> {
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    const db = dataDir ? await PGlite.create(dataDir) : await PGlite.create();
    return new PgliteDatabase(db);
  }

  async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
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
    await this.db.close();
  }
}
