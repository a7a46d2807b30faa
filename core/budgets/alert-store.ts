// Budget alerts as rows of budget_alerts (migrations 004, 007, 008): claiming an alert inserts its
// row, and a unique key lets one instance of those sharing the database win; the row then records
// each webhook's outcome for GET /api/budgets/{id}/alerts. Once per budget, version of what it
// counts (counts digest), window and threshold: the first version to fire in a window takes
// budget_alerts' (budget, window start, threshold) key, the key a release from before 007 inserts
// against, so it still records (and does not send what this one sent) during a rolling upgrade;
// a version an edit re-armed goes to budget_alerts_rearmed, which budget_alerts' reads include. A
// row from before the digest (counts_digest '') counts as fired for every version of the budget
// in its window: the version it fired for is not known.
import type { Queryable } from '../db/types.ts';

export type AlertStatus = 'fired' | 'delivered' | 'failed';

export interface AlertDelivery {
  /** The webhook's origin only: the full URL may hold a secret. */
  target: string;
  format: 'json' | 'slack';
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** Why the last attempt failed (a status or a network error code), never the URL. */
  lastError: string | null;
  deliveredAt: string | null;
}

export interface FiredAlert {
  budgetId: string;
  /** The version of what the budget counts it fired for (counts-digest.ts). */
  countsDigest: string;
  windowStart: Date;
  threshold: number;
  fraction: number;
  spentAmount: number;
  spentTokens: number;
  currency: string;
  deliveries: AlertDelivery[];
}

export interface BudgetAlertRecord extends Omit<FiredAlert, 'windowStart' | 'countsDigest'> {
  id: string;
  windowStart: string;
  firedAt: string;
  updatedAt: string;
  status: AlertStatus;
}

interface AlertRow {
  id: string | number;
  budget_id: string;
  window_start: Date | string;
  threshold: number;
  fired_at: Date | string;
  updated_at: Date | string;
  fraction: number;
  spent_amount: number;
  spent_tokens: string | number;
  currency: string;
  status: AlertStatus;
  deliveries: AlertDelivery[] | string;
}

export interface AlertFilter {
  status?: AlertStatus;
  /** ISO date-time: alerts fired at or after it. */
  since?: string;
  limit: number;
}

const COLUMNS = 'budget_id, window_start, threshold, counts_digest, fraction, spent_amount, spent_tokens, currency, status, deliveries';
const VALUES = `$1::uuid, $2::timestamptz, $3::float8, $4::text, $5::float8, $6::float8, $7::bigint, $8::text, 'fired', $9::jsonb`;

const iso = (v: Date | string): string => new Date(v).toISOString();

function fromRow(row: AlertRow): BudgetAlertRecord {
  return {
    id: String(row.id), budgetId: row.budget_id, windowStart: iso(row.window_start), threshold: Number(row.threshold),
    firedAt: iso(row.fired_at), updatedAt: iso(row.updated_at), fraction: Number(row.fraction), spentAmount: Number(row.spent_amount),
    spentTokens: Number(row.spent_tokens), currency: row.currency, status: row.status,
    deliveries: typeof row.deliveries === 'string' ? JSON.parse(row.deliveries) as AlertDelivery[] : row.deliveries,
  };
}

export class BudgetAlertStore {
  constructor(private readonly db: Queryable) {}

  /** Inserts the alert's row; its id, or null when another instance (or an earlier run) already fired it. */
  async claim(alert: FiredAlert): Promise<string | null> {
    const params = [alert.budgetId, alert.windowStart.toISOString(), alert.threshold, alert.countsDigest, alert.fraction, alert.spentAmount, alert.spentTokens, alert.currency, JSON.stringify(alert.deliveries)];
    const first = await this.db.query<{ id: string | number }>(
      `INSERT INTO budget_alerts (${COLUMNS}) SELECT ${VALUES}
       ON CONFLICT (budget_id, window_start, threshold) DO NOTHING RETURNING id`, params);
    if (first.rows[0]) return String(first.rows[0].id);
    // The window's fraction fired already: for this version, for a pre-digest row, or for another
    // version (this one re-armed it). A statement of its own, so it sees the row it conflicted with.
    const rearmed = await this.db.query<{ id: string | number }>(
      `INSERT INTO budget_alerts_rearmed (${COLUMNS}) SELECT ${VALUES}
       WHERE NOT EXISTS (SELECT 1 FROM ONLY budget_alerts WHERE budget_id = $1::uuid AND window_start = $2::timestamptz AND threshold = $3::float8 AND counts_digest IN ($4::text, ''))
       ON CONFLICT (budget_id, window_start, threshold, counts_digest) DO NOTHING RETURNING id`, params);
    return rearmed.rows[0] ? String(rearmed.rows[0].id) : null;
  }

  async finish(id: string, status: AlertStatus, deliveries: AlertDelivery[]): Promise<void> {
    await this.db.query('UPDATE budget_alerts SET status = $2, deliveries = $3::jsonb, updated_at = now() WHERE id = $1', [id, status, JSON.stringify(deliveries)]);
  }

  /** Every budget's alerts, the latest fired first (GET /api/logs/alerts). */
  async listAll(filter: AlertFilter): Promise<BudgetAlertRecord[]> {
    const { rows } = await this.db.query<AlertRow>(
      `SELECT * FROM budget_alerts
       WHERE ($1::text IS NULL OR status = $1) AND ($2::timestamptz IS NULL OR fired_at >= $2::timestamptz)
       ORDER BY fired_at DESC, id DESC LIMIT $3`,
      [filter.status ?? null, filter.since ?? null, filter.limit]);
    return rows.map(fromRow);
  }

  /** A budget's alerts: the latest window first, and in it the highest fraction (the last to fire) first. */
  async list(budgetId: string, limit: number): Promise<BudgetAlertRecord[]> {
    const { rows } = await this.db.query<AlertRow>(
      'SELECT * FROM budget_alerts WHERE budget_id = $1 ORDER BY window_start DESC, threshold DESC LIMIT $2', [budgetId, limit]);
    return rows.map(fromRow);
  }
}
