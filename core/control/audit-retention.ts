// admin.auditRetentionDays: the audit trail's rows older than that are deleted, at start and every
// hour after (its rows name users and the addresses they came from). Every instance sweeps; the
// delete is the same whichever runs it. Unset, rows are kept.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export class AuditRetention {
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly db: Database, private readonly log: Logger, private readonly days: number) {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  /** Deletes the rows older than the retention; answers how many (0 when the delete failed, which is logged). */
  async sweep(): Promise<number> {
    try {
      const { rows } = await this.db.query<{ n: number }>(
        `WITH gone AS (DELETE FROM control_audit WHERE at < now() - make_interval(days => $1) RETURNING 1) SELECT count(*)::int AS n FROM gone`, [this.days]);
      return rows[0]?.n ?? 0;
    } catch (err) {
      this.log.warn({ err: { message: (err as Error).message } }, 'could not delete the audit trail\'s rows past admin.auditRetentionDays; retrying in an hour');
      return 0;
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
