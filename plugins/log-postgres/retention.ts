// Retention: rows whose started_at is older than `retentionDays` are deleted, in batches of
// `batchSize` rows, each batch its own short transaction (a single DELETE of a month of rows would
// hold its locks and its WAL until the end). One instance sweeps at a time: each batch takes a
// transaction-scoped advisory lock with pg_try_advisory_xact_lock, and an instance that finds it
// taken leaves the sweep to the one holding it. The range scan uses the (started_at, request_id)
// index.
import type { Database } from '../../core/plugin-api/log-backends.ts';

type Db = Pick<Database, 'transaction'>;

export interface SweepResult {
  /** Rows deleted by this sweep. */
  deleted: number;
  /** False when another instance was sweeping the same table (this one stopped). */
  swept: boolean;
}

/** Deletes the table's rows started before `cutoff`, `batchSize` rows per transaction, until none is left or `stopped()`. */
export async function sweepExpired(db: Db, table: string, cutoff: Date, batchSize: number, stopped: () => boolean = () => false): Promise<SweepResult> {
  let deleted = 0;
  while (!stopped()) {
    const batch = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [`relay_log_postgres_retention:${table}`]);
      if (!rows[0]?.locked) return null;
      const res = await tx.query(
        `DELETE FROM ${table} WHERE request_id IN (SELECT request_id FROM ${table} WHERE started_at < $1 LIMIT $2)`,
        [cutoff.toISOString(), batchSize],
      );
      return res.affectedRows ?? 0;
    });
    if (batch === null) return { deleted, swept: false };
    deleted += batch;
    if (batch < batchSize) break;
  }
  return { deleted, swept: true };
}

export interface RetentionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface RetentionScheduleOptions {
  db: Db;
  table: string;
  retentionDays: number;
  batchSize: number;
  /** Time between sweeps; the first runs `firstSweepMs` after start. */
  intervalMs: number;
  firstSweepMs: number;
  log: RetentionLog;
  /** Runs before each sweep (a failure skips that sweep, logged). */
  prepare?: () => Promise<void>;
}

/**
 * Sweeps on a timer (unref'd: it never keeps the process alive). The returned function stops it:
 * no sweep starts after it, and it resolves once a sweep in progress has finished its batch.
 */
export function scheduleRetention(options: RetentionScheduleOptions): () => Promise<void> {
  const { db, table, retentionDays, batchSize, log } = options;
  let stopped = false;
  let running: Promise<void> | null = null;
  const sweep = async () => {
    const cutoff = new Date(Date.now() - retentionDays * 86_400_000);
    try {
      await options.prepare?.();
      const result = await sweepExpired(db, table, cutoff, batchSize, () => stopped);
      if (result.deleted > 0) log.info({ table, deleted: result.deleted, cutoff: cutoff.toISOString() }, 'log-postgres: deleted usage rows past retention');
    } catch (err) {
      log.warn({ err, table }, 'log-postgres: the retention sweep failed; it runs again at the next interval');
    }
  };
  const tick = () => {
    // A sweep slower than the interval is not started twice.
    if (stopped || running) return;
    running = sweep().finally(() => { running = null; });
  };
  let interval: NodeJS.Timeout | null = null;
  const first = setTimeout(() => {
    tick();
    interval = setInterval(tick, options.intervalMs);
    interval.unref();
  }, options.firstSweepMs);
  first.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    if (interval) clearInterval(interval);
    await running;
  };
}
