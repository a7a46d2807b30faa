// A connection of the plugin's own (option `url`), when usage events go to another Postgres
// than Relay's catalog database.
import pg from 'pg';
import type { Database, Queryable } from '../../core/plugin-api/log-backends.ts';

export type PoolDatabase = Pick<Database, 'query' | 'transaction' | 'close'>;

export function poolDatabase(url: string, max = 4): PoolDatabase {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle client's error (server restart) must not crash Relay; the next query reconnects.
  pool.on('error', () => {});
  const queryable = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(sql: string, params?: unknown[]) {
      const result = await client.query(sql, params);
      return { rows: result.rows as T[], affectedRows: result.rowCount ?? undefined };
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  });
  const direct = queryable(pool);
  return {
    query: direct.query,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(queryable(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
