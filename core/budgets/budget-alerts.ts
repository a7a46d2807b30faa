// Budget alerts: when a finished request's spend takes a budget past one of its spec.alertAt
// fractions, the alert fires once for that budget, window and fraction, off the request's path,
// to each of spec.alertWebhooks, and is recorded (budget_alerts) with each webhook's outcome.
//
// And once per version of what the budget counts (scope, window, time zone, currency: counts-digest.ts),
// as its spend counter is: an edit of those counts a new spend, and its fractions alert afresh in
// the same window. An edit of the limit, alertAt or webhooks keeps the version: a fraction already
// fired in the window does not fire again (a lowered limit fires the fractions it newly reaches).
//
// Once, across instances: this instance remembers what it fired (no I/O for the requests after),
// Valkey's SET NX picks one instance when Valkey is configured, and the row's unique key picks one
// among instances sharing the database (with the embedded database, the one instance).
//
// A rolling window has no fixed start: its alerts count in fixed periods of its length (from the
// Unix epoch), so each fraction alerts at most once per period. A lifetime budget alerts once.
//
// An alert that could not be claimed in the database is forgotten, so the next request's spend
// fires it again. Once its row exists, no later request fires it: recording its webhooks' outcome
// is retried here (the deliveries' attempts and backoff), and if it still fails the warning says
// the record stays "fired" and carries the outcome.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Budget } from '../catalog/kinds.ts';
import { jsonAlert, slackAlert } from './alert-payload.ts';
import type { AlertDelivery, AlertFilter, AlertStatus, BudgetAlertStore } from './alert-store.ts';
import { whatCounts, type BudgetStatus } from './budget-guard.ts';
import { countsDigest } from './counts-digest.ts';
import { RepeatWarnings, type RepeatWarningsLog } from './repeat-warnings.ts';
import type { ValkeyAlertClaims } from './valkey-alert-claims.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { deliverWebhook, webhookTarget, type DeliveryOptions, type DeliveryResult } from './webhook-delivery.ts';
import { openWebhookUrl } from './webhook-sealing.ts';

const DAY_MS = 86_400_000;

export const DEFAULT_DELIVERY: DeliveryOptions = { attempts: 5, retryBaseMs: 1_000, timeoutMs: 10_000 };

export interface BudgetAlertsOptions {
  store: BudgetAlertStore;
  claims?: ValkeyAlertClaims;
  log: RepeatWarningsLog;
  delivery?: DeliveryOptions;
  now?: () => number;
  /** Opens webhook URLs stored sealed (webhook-sealing.ts); without it, URLs are read as stored. */
  sealer?: Sealer;
}

/** The window an alert is deduplicated in: [startMs, endMs), endMs null for lifetime. */
export function alertWindow(budget: Budget, status: BudgetStatus, now: number): { startMs: number; endMs: number | null } {
  const w = budget.spec.window;
  if (typeof w === 'object') {
    const period = w.rollingDays * DAY_MS;
    const startMs = Math.floor(now / period) * period;
    return { startMs, endMs: startMs + period };
  }
  return { startMs: Date.parse(status.windowStart), endMs: status.resetsAt === null ? null : Date.parse(status.resetsAt) };
}

/** What an alert record shows of a webhook: its origin, never the URL. */
const targetOf = (url: string | null): string => (url === null ? '(sealed under another master key)' : webhookTarget(url));

export class BudgetAlerts {
  /** Per budget: the version and window this instance last fired in, and the fractions it claimed there. */
  private readonly fired = new Map<string, { counts: string; startMs: number; thresholds: Set<number> }>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly now: () => number;
  /** Warnings of alerts whose row could not be inserted (tried again on every request) or claimed, rate-limited per budget. */
  private readonly recordings: RepeatWarnings;
  private readonly claimings: RepeatWarnings;

  constructor(private readonly options: BudgetAlertsOptions) {
    this.now = options.now ?? Date.now;
    this.recordings = new RepeatWarnings(options.log, 'alert\'s recording');
    this.claimings = new RepeatWarnings(options.log, 'alert\'s claim');
  }

  /** Called with a budget's status after a request's spend was counted: fires what it crossed (no I/O here). */
  check(budget: Budget, status: BudgetStatus): void {
    const crossed = budget.spec.alertAt.filter((t) => status.fraction >= t);
    if (crossed.length === 0) return;
    const now = this.now();
    const window = alertWindow(budget, status, now);
    const counts = whatCounts(budget.spec);
    let seen = this.fired.get(budget.metadata.id);
    if (!seen || seen.startMs !== window.startMs || seen.counts !== counts) {
      seen = { counts, startMs: window.startMs, thresholds: new Set() };
      this.fired.set(budget.metadata.id, seen);
    }
    for (const threshold of crossed) {
      if (seen.thresholds.has(threshold)) continue;
      seen.thresholds.add(threshold);
      const run = this.fire(budget, status, threshold, countsDigest(counts), window, now).catch((err: unknown) => {
        // Not recorded: forgotten here, so the next request's spend tries again.
        seen.thresholds.delete(threshold);
        this.recordings.failed(budget.metadata.id, now, { err: (err as Error).message, budget: budget.metadata.slug, threshold }, 'a budget alert could not be recorded; it is tried again on the next request');
      });
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
    }
  }

  /** Resolves when every alert fired so far is delivered or failed (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Shutdown: lets deliveries under way finish for up to `maxWaitMs`, not through every retry. */
  async close(maxWaitMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((resolve) => { timer = setTimeout(resolve, maxWaitMs); })]);
    clearTimeout(timer);
  }

  /** Every budget's recorded alerts, the latest fired first. */
  listAll(filter: AlertFilter) {
    return this.options.store.listAll(filter);
  }

  /** A budget's recorded alerts, the latest first. */
  list(budgetId: string, limit: number) {
    return this.options.store.list(budgetId, limit);
  }

  private open(stored: string): string | null {
    try {
      return this.options.sealer ? openWebhookUrl(this.options.sealer, stored) : stored;
    } catch {
      return null;
    }
  }

  private async fire(budget: Budget, status: BudgetStatus, threshold: number, digest: string, window: { startMs: number; endMs: number | null }, now: number): Promise<void> {
    const { store, claims } = this.options;
    const id = budget.metadata.id;
    const claim = { budgetId: id, countsDigest: digest, windowStartMs: window.startMs, threshold };
    let claimed: string | null = null;
    if (claims) {
      try {
        claimed = await claims.claim(claim, window.endMs, now);
        this.claimings.answered(id, { budget: budget.metadata.slug }, 'claiming a budget alert in Valkey answers again');
        if (claimed === null) return;
      } catch (err) {
        // Valkey down: the database's unique key still picks one among instances sharing it.
        this.claimings.failed(id, now, { err: (err as Error).message, budget: budget.metadata.slug, threshold }, 'claiming a budget alert in Valkey failed; the database decides alone');
      }
    }
    const hooks = budget.spec.alertWebhooks ?? [];
    // Opened here, off the request's path; null: sealed under a master key this instance lacks.
    const urls = hooks.map((h) => this.open(h.url));
    const deliveries: AlertDelivery[] = hooks.map((h, i) => ({ target: targetOf(urls[i] ?? null), format: h.format, status: 'pending', attempts: 0, lastError: null, deliveredAt: null }));
    let rowId: string | null;
    try {
      rowId = await store.claim({
        budgetId: id, countsDigest: digest, windowStart: new Date(window.startMs), threshold, fraction: status.fraction,
        spentAmount: status.spentAmount, spentTokens: status.spentTokens, currency: status.currency, deliveries,
      });
      this.recordings.answered(id, { budget: budget.metadata.slug }, 'recording a budget alert answers again');
    } catch (err) {
      if (claimed !== null) await claims!.release(claim, claimed).catch(() => undefined);
      throw err;
    }
    if (rowId === null) return;
    if (hooks.length === 0) return;
    const facts = { budget, status, threshold, firedAt: new Date(now).toISOString() };
    const delivery = this.options.delivery ?? DEFAULT_DELIVERY;
    await Promise.all(hooks.map(async (hook, i) => {
      const url = urls[i];
      const result: DeliveryResult = url === null
        ? { ok: false, attempts: 0, error: 'the URL is sealed under a master key this instance lacks' }
        : await deliverWebhook(url, hook.format === 'slack' ? slackAlert(facts) : jsonAlert(facts), delivery);
      deliveries[i] = { ...deliveries[i]!, status: result.ok ? 'delivered' : 'failed', attempts: result.attempts, lastError: result.error, deliveredAt: result.ok ? new Date(this.now()).toISOString() : null };
      if (!result.ok) {
        this.options.log.warn({ budget: budget.metadata.slug, threshold, target: deliveries[i]!.target, attempts: result.attempts, error: result.error }, 'a budget alert webhook failed');
      }
    }));
    const outcome: AlertStatus = deliveries.every((d) => d.status === 'delivered') ? 'delivered' : 'failed';
    await this.finish(budget, rowId, threshold, outcome, deliveries);
  }

  /**
   * Records the deliveries' outcome in the alert's row, retried with their backoff: the row exists,
   * so no later request would fire the alert (and record it) again.
   */
  private async finish(budget: Budget, rowId: string, threshold: number, outcome: AlertStatus, deliveries: AlertDelivery[]): Promise<void> {
    const { attempts, retryBaseMs } = this.options.delivery ?? DEFAULT_DELIVERY;
    const most = Math.max(1, attempts);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.options.store.finish(rowId, outcome, deliveries);
        if (attempt > 1) this.options.log.info({ budget: budget.metadata.slug, threshold, outcome, attempts: attempt }, `a budget alert's outcome (${outcome}) is recorded, at attempt ${attempt}`);
        return;
      } catch (err) {
        const fields = { err: (err as Error).message, budget: budget.metadata.slug, threshold, outcome };
        if (attempt >= most) {
          // Not thrown: the row exists, a later request would not record it either.
          this.options.log.warn({ ...fields, deliveries: deliveries.map((d) => ({ target: d.target, status: d.status, attempts: d.attempts, lastError: d.lastError })) },
            `a budget alert's outcome (${outcome}) could not be recorded after ${most} attempts: its record stays "fired" with its webhooks pending and is not tried again; each webhook's outcome is in this line`);
          return;
        }
        const waitMs = retryBaseMs * 2 ** (attempt - 1);
        this.options.log.warn(fields, `a budget alert's outcome (${outcome}) could not be recorded; tried again in ${waitMs} ms (attempt ${attempt} of ${most})`);
        await sleep(waitMs);
      }
    }
  }
}
