// The plugin's own schema, versioned per table in relay_log_postgres_migrations. SQL runs on
// Postgres 15 and PGlite.
import type { Database, Queryable } from '../../core/plugin-api/log-backends.ts';
import { RECORD_DEFINITION } from './columns.ts';
import { SESSION_ID_SQL } from './sql-filter.ts';

type Transactional = Pick<Database, 'query' | 'transaction'>;

function migrations(table: string): string[] {
  return [
    // 1: the table, and indexes for the read queries: newest first (and keyset paging), each filter
    // dimension with time, and errors (status >= 400 is the dashboard's common filter).
    `CREATE TABLE IF NOT EXISTS ${table} (${RECORD_DEFINITION.replace('request_id text', 'request_id text PRIMARY KEY')
      .replace('started_at timestamptz', 'started_at timestamptz NOT NULL')
      .replace("extras jsonb", "extras jsonb NOT NULL DEFAULT '{}'::jsonb")})`,
    `CREATE INDEX IF NOT EXISTS ${table}_started_idx ON ${table} (started_at DESC, request_id DESC)`,
    `CREATE INDEX IF NOT EXISTS ${table}_policy_idx ON ${table} (policy_id, started_at DESC)`,
    `CREATE INDEX IF NOT EXISTS ${table}_relay_key_idx ON ${table} (relay_key_id, started_at DESC)`,
    `CREATE INDEX IF NOT EXISTS ${table}_model_idx ON ${table} (model_id, started_at DESC)`,
    `CREATE INDEX IF NOT EXISTS ${table}_errors_idx ON ${table} (started_at DESC) WHERE status >= 400`,
  ];
}

/** Statements grouped by schema version. */
function versions(table: string): Array<{ version: number; statements: string[] }> {
  return [
    { version: 1, statements: migrations(table) },
    // 2: a session's requests (GET /api/usage/sessions/{id}) without scanning the window.
    { version: 2, statements: [`CREATE INDEX IF NOT EXISTS ${table}_session_idx ON ${table} ((${SESSION_ID_SQL}), started_at DESC) WHERE ${SESSION_ID_SQL} IS NOT NULL`] },
    // 3: the client's and the upstream's request ids (tables made before them lack the columns).
    { version: 3, statements: [
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS client_request_id text`,
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS upstream_request_id text`,
    ] },
  ];
}

export async function migrate(db: Transactional, table: string): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS relay_log_postgres_migrations (
    table_name text NOT NULL, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, version))`);
  // Unbounded by the query deadline: it waits for another instance's migration, and an index build
  // on a big table takes what it takes.
  await db.transaction(async (tx: Queryable) => {
    // Several instances may start at once: one migrates, the others wait and find it done.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`relay_log_postgres:${table}`]);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM relay_log_postgres_migrations WHERE table_name = $1', [table]);
    const applied = new Set(rows.map((r) => Number(r.version)));
    for (const { version, statements } of versions(table)) {
      if (applied.has(version)) continue;
      for (const sql of statements) await tx.query(sql);
      await tx.query('INSERT INTO relay_log_postgres_migrations (table_name, version) VALUES ($1, $2)', [table, version]);
    }
  }, { unbounded: true });
}
