// When each relay key was last accepted and each host key last sent upstream, so that an operator
// can find keys nobody uses any more. Noted in memory on each use (a Map write on the request path)
// and written to Postgres every FLUSH_MS and at shutdown, one statement for every key seen;
// instances sharing the database keep the latest time any of them saw. Kept apart from the
// catalog: a use is not a change.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';

export const FLUSH_MS = 15_000;

export type LastUsedKind = 'relay-keys' | 'host-keys';

/** A kind's statements; `table` and `column` are the constants below, never input. */
function statements(table: string, column: string, what: string) {
  return {
    upsert: `INSERT INTO ${table} (${column}, last_used_at)
      SELECT id, to_timestamp(ms / 1000.0) FROM unnest($1::uuid[], $2::float8[]) AS u(id, ms)
      ON CONFLICT (${column}) DO UPDATE SET last_used_at = greatest(${table}.last_used_at, EXCLUDED.last_used_at)`,
    select: `SELECT ${column} AS id, last_used_at FROM ${table}`,
    what,
  };
}

/** Each kind's table (migrations 010 and 011). */
const TABLES: Record<LastUsedKind, ReturnType<typeof statements>> = {
  'relay-keys': statements('relay_key_last_used', 'relay_key_id', 'relay keys'),
  'host-keys': statements('host_key_last_used', 'host_key_id', 'host keys'),
};

export class LastUsed {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private readonly table: (typeof TABLES)[LastUsedKind];

  constructor(private readonly db: Database, private readonly log: Logger, readonly kind: LastUsedKind, flushMs = FLUSH_MS) {
    this.table = TABLES[kind];
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** The key (by id) was used now. */
  note(id: string): void {
    this.pending.set(id, Date.now());
  }

  /** Writes what was noted since the last flush; a failed write is kept for the next one. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.db.query(this.table.upsert, [[...batch.keys()], [...batch.values()]]);
    } catch (err) {
      // Put back what this write held, unless a newer use was noted meanwhile.
      for (const [id, at] of batch) if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at);
      this.log.warn({ err: { message: (err as Error).message }, keys: batch.size }, `could not record when ${this.table.what} were last used; retrying at the next flush`);
    }
  }

  /** Every key's last use as the database has it, with this instance's unwritten ones. */
  async all(): Promise<Map<string, string>> {
    await this.flush();
    const { rows } = await this.db.query<{ id: string; last_used_at: Date | string }>(this.table.select);
    return new Map(rows.map((r) => [r.id, new Date(r.last_used_at).toISOString()]));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
