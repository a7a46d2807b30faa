// Budget enforcement on this instance: what each budget has spent in its current window, checked
// (synchronously, no I/O) before a request is sent, and added to when a request finishes.
//
// A budget's spend is `base + earlier + local`: base is read from the usage log (the selected usage
// backend's summary over the window and the budget's scope), earlier and local are what this
// instance's requests added since, before and after the read under way began. The base is re-read
// when a budget is first seen, when its window resets, and every RECONCILE_MS, so spend written by
// other instances sharing the usage log (log-postgres, log-clickhouse) counts within that delay. A
// reconcile takes `earlier` as in the log, so readSpend answers only once the usage events recorded
// until then are written (spend-from-log.ts): spend still queued for the log is not lost. When they
// are not written in time (a log whose writes fail or stall while its reads answer), the answer is
// `partial` and merged by max, `earlier` kept: the error is on the side of refusing early. A request
// whose end starts a reconcile (a budget not read before, as one that only alerts; a reconcile due)
// is counted first: it is queued for the log already, so the read counts it, once. Requests
// finishing while the base is read may be counted twice until the next reconcile: the error is on
// the side of refusing early.
//
// A budget's spend is unknown, not 0, until its first read answers (at start-up, warm(); for a
// budget new to this instance; a window that just reset starts known, at 0): the pipeline waits for it, bounded
// (firstReads), and refusal() refuses what it still cannot count with a 503. An edit that changes
// what a budget counts keeps the spend counted so far until the new read answers.
//
// Every read has a deadline (readTimeoutMs): one past it counts as failed, and its late answer is
// dropped. A first read whose usage log fails or times out leaves the spend unknown (refusing
// budgets keep refusing with the 503) and the next request reads again, UNKNOWN_RETRY_MS later at
// the soonest; a reconcile that fails or times out keeps the spend counted so far until the next
// reconcile. A backend that answers it cannot say (no summary, RELAY_ERR_QUERY_UNSUPPORTED) counts
// this instance's requests only: asking again would not change its answer. Failures are warned
// about per budget and read at most once a minute while they repeat (repeat-warnings.ts).
//
// With Valkey (options.shared), calendar and lifetime budgets count in one shared total instead:
// each instance adds its requests atomically when they end and re-reads the total every
// SHARED_READ_MS, so instances see each other's spend within that delay. base is then the shared
// total, merged by max (a calendar window's spend only grows), and earlier + local this instance's
// spend it may not count yet: increments not acknowledged, or failed (those stay counted here, the
// others learn them from the usage log; failures are warned about per budget at most once a minute). A reconcile raises the shared total to the usage log's
// figure, which counts `earlier`: base becomes the larger of the raised total and base + earlier.
// When the raise fails or gets no answer once the log has answered, the log's figure is merged the
// same way, as without Valkey (a first read's spend is known: no 503), and the next reconcile raises
// the shared total again. Each version of what a budget counts (scope, window, time zone, currency)
// has its own shared total (valkey-spend.ts): an edit of them counts the new scope's spend, read
// from the usage log, not the old scope's total.
//
// Over-spend bound: a request is admitted while spend < limit and counted when it ends, so with N
// requests in flight a budget can end at most N requests' cost past its limit (N counts every
// instance's requests in flight; without Valkey, other instances add theirs until the next
// reconcile).
import type { Budget, BudgetSpec } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import { RelayError } from '../errors.ts';
import type { Principal, UsageEvent } from '../hooks.ts';
import { fromMicros, toMicros } from '../observer/money.ts';
import type { UsageFilter } from '../observer/types.ts';
import { ReadTimedOut, withDeadline } from './read-deadline.ts';
import { RepeatWarnings, type RepeatWarningsLog } from './repeat-warnings.ts';
import { sharedTotalId, type SharedSpend } from './valkey-spend.ts';
import { windowAt } from './window.ts';
import { unpricedBinding, type UnpricedBinding } from './unpriced.ts';

/** How often a budget's spend is re-read from the usage log, by default (config budgets.reconcileMs). */
export const RECONCILE_MS = 60_000;
/** Longest a status reader, or a request under a budget whose spend is not known yet, waits for a read of the usage log under way. */
const FRESH_WAIT_MS = 2_000;
/** How often a shared (Valkey) total is re-read between this instance's own increments. */
export const SHARED_READ_MS = 500;
/**
 * Most a read of a budget's spend may take, by default (config budgets.readTimeoutMs): room for the
 * read's wait for queued usage (QUEUE_WAIT_MS, 5 s) and a slow summary, well within RECONCILE_MS.
 */
export const READ_TIMEOUT_MS = 15_000;
/** Soonest a budget whose first read failed is read again: the retry-after of its 503. */
const UNKNOWN_RETRY_MS = 1_000;

export interface Spend {
  micros: number;
  tokens: number;
}

/** Spend read from the usage log; `partial` when this instance's usage recorded before the read may be missing from it (still queued). */
export interface LogSpend extends Spend {
  partial?: boolean;
}

export interface BudgetStatus {
  budgetId: string;
  windowStart: string;
  resetsAt: string | null;
  spentAmount: number;
  spentTokens: number;
  limitAmount: number | null;
  limitTokens: number | null;
  remainingAmount: number | null;
  remainingTokens: number | null;
  currency: string;
  /** The larger of the two spent fractions. */
  fraction: number;
  exceeded: boolean;
}

export interface BudgetGuardOptions {
  snapshot: () => CatalogSnapshot;
  /**
   * Spend in the usage log over a window and scope, this instance's events recorded before the call
   * included; null when no backend can say. The filter's currency limits the cost, not the tokens.
   */
  readSpend: (filter: UsageFilter) => Promise<LogSpend | null>;
  log: RepeatWarningsLog;
  now?: () => number;
  reconcileMs?: number;
  /** Deadline of one read of the usage log or of the shared total (READ_TIMEOUT_MS by default). */
  readTimeoutMs?: number;
  /**
   * Spend shared by every instance at once (Valkey): daily, weekly, monthly and lifetime budgets
   * count there (increments when a request ends, re-read every SHARED_READ_MS, raised to the usage
   * log's figures when reconciled); rolling ones, whose window moves, count from the log.
   */
  shared?: SharedSpend;
  /**
   * Told a budget's status after a request's spend was counted (alerts: core/budgets/budget-alerts.ts);
   * not while an edit's new version still counts the old one's spend, until its first read answers.
   */
  onCounted?: (budget: Budget, status: BudgetStatus) => void;
}

interface Counter {
  /** What the counter counts (scope, window, zone, currency): a change starts over; a new snapshot of the same budget does not. */
  counts: string;
  startMs: number;
  resetsAtMs: number | null;
  base: Spend;
  /** This instance's spend that base does not count, recorded before the read under way (or the last one) began: its answer counts it. */
  earlier: Spend;
  /** This instance's spend that base does not count, recorded since. */
  local: Spend;
  /** Counts the reconciles begun: an increment sent to Valkey remembers it, to know where it is counted when acknowledged. */
  generation: number;
  /** Increments sent before this generation are counted in base (a read that counted them answered). */
  foldedGeneration: number;
  /** False until a read answers: its spend is unknown, not 0. */
  known: boolean;
  /** The spend of the counter it replaced (an edit changed what counts), counted until its first read answers. */
  held: Spend | null;
  /** When the next reconcile is due (0: at once). */
  reconcileAt: number;
  reconciling: boolean;
  /** The reconcile under way, for a reader that would rather wait for it than see a stale figure. */
  reconciled: Promise<void> | null;
  /** Counted in the shared store: base is the shared total, merged by max, and earlier + local what it may lack. */
  shared: boolean;
  /** The shared total it counts in (sharedTotalId: the budget and a digest of `counts`). */
  total: string;
  /** The budget's total from before the digest (a rolling upgrade's older instances add there), when it counted the same as this one. */
  legacy: string | undefined;
  readAt: number;
  reading: boolean;
}

const maxSpend = (a: Spend, b: Spend): Spend => ({ micros: Math.max(a.micros, b.micros), tokens: Math.max(a.tokens, b.tokens) });
const plus = (a: Spend, b: Spend): Spend => ({ micros: a.micros + b.micros, tokens: a.tokens + b.tokens });
const minus = (a: Spend, b: Spend): Spend => ({ micros: a.micros - b.micros, tokens: a.tokens - b.tokens });
const ZERO: Spend = { micros: 0, tokens: 0 };

/** Resolves when the promise does or after ms, whichever comes first (a slow usage backend must not hang a caller). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); })]);
  clearTimeout(timer);
}

const scopeMatches = (spec: BudgetSpec, relayKeyId: string | null, policyId: string | null, modelId: string | null): boolean => {
  const s = spec.scope ?? {};
  if (s.relayKeyId !== undefined) return s.relayKeyId === relayKeyId;
  if (s.policyId !== undefined) return s.policyId === policyId;
  if (s.modelId !== undefined) return s.modelId === modelId;
  return true;
};

/**
 * What a budget's spend counts: a change starts a new counter, and a new shared total in Valkey.
 * Field by field, so that the order of a stored spec's keys does not matter.
 */
export const whatCounts = (spec: BudgetSpec): string => {
  const s = spec.scope ?? {};
  return JSON.stringify([s.relayKeyId ?? null, s.policyId ?? null, s.modelId ?? null,
    typeof spec.window === 'object' ? { rollingDays: spec.window.rollingDays } : spec.window, spec.timezone, spec.currency]);
};

/**
 * Whether the budget was edited since the window began (any edit: the catalog keeps no record of
 * which fields changed): if not, a total from before the digest counted what this version counts.
 */
const unchangedSince = (budget: Budget, startMs: number): boolean =>
  Date.parse(budget.metadata.updatedAt) <= Math.max(startMs, Date.parse(budget.metadata.createdAt));

/** Budget and model pairs remembered as warned about at most (then warned about again). */
const MAX_WARNED = 10_000;

/** The refusal of a request under a refusing budget whose spend is not known yet (no read of it has answered). */
function unknownRefusal(budget: Budget): RelayError {
  return new RelayError('RELAY_ERR_BUDGET_UNAVAILABLE',
    `Budget "${budget.metadata.displayName}" (${budget.metadata.slug}) cannot say what it has spent yet: its spend is being read from the usage log, which has not answered. Retry shortly.`,
    { headers: { 'retry-after': '1' } });
}

/** The refusal of a request that a money budget refusing unpriced requests could not count. */
function unpricedRefusal(budget: Budget, modelSlug: string, binding: UnpricedBinding): RelayError {
  const why = binding.modifier !== undefined
    ? `has no price for "${binding.modifier}" (the premium mode this request asks for)`
    : binding.pricedIn === null
      ? 'has no price'
      : `is priced in ${binding.pricedIn}, not ${budget.spec.currency},`;
  const ask = binding.modifier !== undefined
    ? `Send the request at the standard speed, or ask an administrator to add the figure (a pricing's modifiers.${binding.modifier}).`
    : 'Ask an administrator to add a pricing for it.';
  return new RelayError('RELAY_ERR_BUDGET_UNPRICED',
    `Budget "${budget.metadata.displayName}" (${budget.metadata.slug}) caps spending in ${budget.spec.currency} and refuses what it cannot count: the model \`${modelSlug}\` ${why} on host ${binding.hostSlug} (upstream model ${binding.upstreamModel}). ${ask}`);
}

const PERIOD = { daily: 'day', weekly: 'week', monthly: 'month', lifetime: 'lifetime' } as const;
const windowName = (spec: BudgetSpec): string => (typeof spec.window === 'object' ? `${spec.window.rollingDays}-day window` : PERIOD[spec.window]);

export class BudgetGuard {
  private readonly counters = new Map<string, Counter>();
  private readonly now: () => number;
  private listed: { version: number; budgets: Budget[] } = { version: -1, budgets: [] };
  /** Budget and model pairs already warned about (warnUncounted). */
  private readonly warnedUncounted = new Set<string>();
  /** Warnings of failed reads, rate-limited per budget and read. */
  private readonly warnings: RepeatWarnings;
  /** Warnings of failed increments of shared totals, rate-limited per budget (one per request otherwise). */
  private readonly increments: RepeatWarnings;

  constructor(private readonly options: BudgetGuardOptions) {
    this.now = options.now ?? Date.now;
    this.warnings = new RepeatWarnings(options.log, 'read');
    this.increments = new RepeatWarnings(options.log, 'increment');
  }

  /** Enabled budgets of the current snapshot (recomputed when the catalog changes). */
  private budgets(): Budget[] {
    const snapshot = this.options.snapshot();
    if (this.listed.version !== snapshot.version) {
      const all = [...snapshot.byKind('budgets').values()] as unknown as Budget[];
      this.listed = { version: snapshot.version, budgets: all.filter((b) => b.spec.enabled !== false) };
      // A deleted budget's counter goes with it.
      for (const id of this.counters.keys()) {
        if (snapshot.byKind('budgets').has(id)) continue;
        this.counters.delete(id);
        this.warnings.forget(`${id}:`);
        this.increments.forget(`${id}:`);
      }
    }
    return this.listed.budgets;
  }

  /** A budget's counter in its current window, its due read of the usage log or shared total started. */
  private counter(budget: Budget, now: number): Counter {
    const c = this.windowCounter(budget, now);
    this.startDueRead(budget, c, now);
    return c;
  }

  /** A budget's counter in its current window (a new one when its window reset or what it counts changed); no read started. */
  private windowCounter(budget: Budget, now: number): Counter {
    let c = this.counters.get(budget.metadata.id);
    const rolling = typeof budget.spec.window === 'object';
    const counts = whatCounts(budget.spec);
    if (!c || c.counts !== counts || (c.resetsAtMs !== null && now >= c.resetsAtMs)) {
      const w = windowAt(budget.spec, now);
      // An edit must not reopen a spent budget while its new figure is read.
      const held = c && c.counts !== counts && c.known ? spentBy(c) : null;
      // A window that just began has spent (next to) nothing: no request waits for its first read.
      const windowReset = c !== undefined && c.counts === counts;
      const shared = this.options.shared !== undefined && !rolling;
      c = {
        counts, startMs: w.startMs, resetsAtMs: w.resetsAtMs, base: { ...ZERO }, earlier: { ...ZERO }, local: { ...ZERO }, generation: 0, foldedGeneration: 0, known: held !== null || windowReset, held,
        reconcileAt: 0, reconciling: false, reconciled: null, shared, readAt: now, reading: false,
        // Once per version and window, not per request.
        total: shared ? sharedTotalId(budget.metadata.id, counts) : '',
        legacy: shared && unchangedSince(budget, w.startMs) ? budget.metadata.id : undefined,
      };
      this.counters.set(budget.metadata.id, c);
    } else if (rolling) {
      c.startMs = windowAt(budget.spec, now).startMs;
    }
    return c;
  }

  /** Starts the counter's reconcile when due, else a re-read of its shared total when due. */
  private startDueRead(budget: Budget, c: Counter, now: number): void {
    if (!c.reconciling && now >= c.reconcileAt) this.reconcile(budget, c, now);
    else if (c.shared && !c.reading && now - c.readAt >= SHARED_READ_MS) this.readShared(budget, c, now);
  }

  private readShared(budget: Budget, c: Counter, now: number): void {
    c.reading = true;
    const key = `${budget.metadata.id}:shared`;
    withDeadline(this.options.shared!.read(c.total, c.startMs), this.readTimeoutMs).then((total) => {
      c.base = maxSpend(c.base, total);
      this.warnings.answered(key, { budget: budget.metadata.slug }, 'reading a budget\'s shared spend from Valkey answers again');
    }, (err: unknown) => {
      if (err instanceof ReadTimedOut) this.warnings.failed(key, now, { budget: budget.metadata.slug, timeoutMs: err.timeoutMs }, `reading a budget's shared spend from Valkey did not answer within ${err.timeoutMs} ms`);
      else this.warnings.failed(key, now, { err, budget: budget.metadata.slug }, 'reading a budget\'s shared spend from Valkey failed');
    }).finally(() => {
      c.readAt = now;
      c.reading = false;
    });
  }

  private reconcile(budget: Budget, c: Counter, now: number): void {
    c.reconciling = true;
    // What this instance counted until now is in the log's answer (readSpend waits until it is written).
    c.earlier = plus(c.earlier, c.local);
    c.local = { ...ZERO };
    c.generation++;
    const s = budget.spec.scope ?? {};
    // The cost in the budget's currency only, as record() counts it; tokens in every currency (spend-from-log.ts).
    const filter: UsageFilter = { from: new Date(c.startMs), currency: budget.spec.currency, ...(s.relayKeyId ? { relayKeyId: s.relayKeyId } : {}), ...(s.policyId ? { policyId: s.policyId } : {}), ...(s.modelId ? { modelId: s.modelId } : {}) };
    // Whether the log's figure may lack this instance's spend still queued for it: then `earlier` stays counted here.
    let partial = false;
    const fromLog = this.options.readSpend(filter).then((spend) => {
      partial = spend?.partial === true;
      return spend;
    });
    // The usage log's answer, once it came: a shared counter still has it when Valkey then fails.
    let logged: { spend: LogSpend | null } | null = null;
    const read = c.shared
      ? fromLog.then((spend) => {
        logged = { spend };
        return this.options.shared!.raise(c.total, c.startMs, c.resetsAtMs, spend ?? { micros: 0, tokens: 0 }, c.legacy);
      })
      : fromLog;
    // Past its deadline the read counts as failed and the race drops its late answer.
    c.reconciled = withDeadline(read, this.readTimeoutMs).then((spend) => {
      const answered = c.shared
        ? 'reading a budget\'s spend from the usage log and raising its shared total in Valkey answer again'
        : 'reading a budget\'s spend from the usage log answers again';
      this.warnings.answered(`${budget.metadata.id}:reconcile`, { budget: budget.metadata.slug }, answered);
      // A shared total raised to no figure of the log's does not count `earlier`, nor does a partial figure: merged as a shared read is.
      this.took(budget, c, now, spend, logged?.spend !== null && !partial);
    }, (err: unknown) => {
      if (logged) this.raiseFailed(budget, c, now, err, logged.spend);
      else this.readFailed(budget, c, now, err);
    }).finally(() => { c.reconciling = false; c.reconciled = null; });
  }

  /**
   * A reconcile that answered: spend is the usage log's figure, or a shared counter's total raised
   * to it (or the log's figure alone, when the raise failed); null when no backend can say.
   * `countsEarlier` when it counts this instance's spend recorded before the read began.
   */
  private took(budget: Budget, c: Counter, startedAt: number, spend: Spend | null, countsEarlier: boolean): void {
    if (this.counters.get(budget.metadata.id) !== c) return; // the window reset meanwhile
    if (spend && !countsEarlier) {
      c.base = maxSpend(c.base, spend);
    } else if (spend) {
      // A rolling window's spend can drop (older spend leaves it); a shared counter's calendar window's only grows.
      // Over-count kept: a failed increment in `local` that this figure already counts is added again next time; the log may lack it.
      c.base = c.shared ? maxSpend(plus(c.base, c.earlier), spend) : spend;
      c.earlier = { ...ZERO };
      c.foldedGeneration = c.generation;
    }
    c.held = null;
    c.known = true;
    c.reconcileAt = startedAt + this.reconcileMs;
  }

  /**
   * A shared counter's reconcile whose usage log answered and whose raise of the shared total in
   * Valkey to its figure failed or timed out: the log's figure counts as it would without Valkey
   * (a first read's spend is known, not a 503), and the next reconcile raises the shared total again.
   */
  private raiseFailed(budget: Budget, c: Counter, startedAt: number, err: unknown, spend: LogSpend | null): void {
    const counting = spend ? 'counting the usage log\'s figure and this instance\'s requests; the next reconcile raises the shared total again' : 'counting this instance\'s requests only';
    this.warnReconcile(budget, startedAt, err, 'raising a budget\'s shared spend in Valkey to the usage log\'s figure', counting);
    this.took(budget, c, startedAt, spend, spend?.partial !== true);
  }

  /**
   * A reconcile whose read of the usage log failed or timed out: a known spend stays counted, an
   * unknown one stays unknown (and is read again soon).
   */
  private readFailed(budget: Budget, c: Counter, startedAt: number, err: unknown): void {
    const doing = 'reading a budget\'s spend from the usage log';
    const cannotSay = err instanceof RelayError && err.code === 'RELAY_ERR_QUERY_UNSUPPORTED';
    if (c.known || cannotSay) {
      this.warnReconcile(budget, startedAt, err, doing, 'counting this instance\'s requests only');
      c.known = true;
      c.reconcileAt = startedAt + this.reconcileMs;
      return;
    }
    // Fail closed: nothing is known of the window's spend, which may already be past the limit.
    this.warnReconcile(budget, startedAt, err, doing, 'its spend stays unknown (a refusing budget answers 503) until the usage log answers');
    c.reconcileAt = this.now() + UNKNOWN_RETRY_MS;
  }

  /** Warns (rate-limited) that a step of a budget's reconcile failed or missed its deadline, and what is counted meanwhile. */
  private warnReconcile(budget: Budget, startedAt: number, err: unknown, doing: string, counting: string): void {
    const timedOut = err instanceof ReadTimedOut;
    const what = timedOut ? `${doing} did not answer within ${err.timeoutMs} ms` : `${doing} failed`;
    const fields = timedOut ? { budget: budget.metadata.slug, timeoutMs: err.timeoutMs } : { err, budget: budget.metadata.slug };
    this.warnings.failed(`${budget.metadata.id}:reconcile`, startedAt, fields, `${what}; ${counting}`);
  }

  private get reconcileMs(): number {
    return this.options.reconcileMs ?? RECONCILE_MS;
  }

  private get readTimeoutMs(): number {
    return this.options.readTimeoutMs ?? READ_TIMEOUT_MS;
  }

  private statusOf(budget: Budget, c: Counter): BudgetStatus {
    const spec = budget.spec;
    const { micros, tokens } = spentBy(c);
    // At least one micro-unit: a limit stored before limitAmount had its minimum must not make the fraction infinite.
    const limitMicros = spec.limitAmount === undefined ? null : Math.max(1, toMicros(spec.limitAmount));
    const fractions = [limitMicros === null ? 0 : micros / limitMicros, spec.limitTokens === undefined ? 0 : tokens / spec.limitTokens];
    const fraction = Math.max(...fractions);
    return {
      budgetId: budget.metadata.id,
      windowStart: new Date(c.startMs).toISOString(),
      resetsAt: c.resetsAtMs === null ? null : new Date(c.resetsAtMs).toISOString(),
      spentAmount: fromMicros(micros),
      spentTokens: tokens,
      limitAmount: spec.limitAmount ?? null,
      limitTokens: spec.limitTokens ?? null,
      remainingAmount: limitMicros === null ? null : fromMicros(Math.max(0, limitMicros - micros)),
      remainingTokens: spec.limitTokens === undefined ? null : Math.max(0, spec.limitTokens - tokens),
      currency: spec.currency,
      fraction,
      exceeded: fraction >= 1,
    };
  }

  /** A budget's spend in its current window. */
  status(budget: Budget): BudgetStatus {
    return this.statusOf(budget, this.counter(budget, this.now()));
  }

  /** The same, once a read of the usage log under way has finished (a budget first seen reads 0 until then). */
  async freshStatus(budget: Budget): Promise<BudgetStatus> {
    const c = this.counter(budget, this.now());
    // Bounded: a slow usage backend gives the figure as counted so far, not a hung answer.
    if (c.reconciled) await within(c.reconciled, FRESH_WAIT_MS);
    return this.statusOf(budget, c);
  }

  /** Starts every enabled budget's first read (at start-up, so that the first requests find their spend known). */
  warm(): void {
    const now = this.now();
    for (const budget of this.budgets()) this.counter(budget, now);
  }

  /**
   * A wait (at most FRESH_WAIT_MS) for the first read of each refusing budget covering a request of
   * this principal to one of these models whose spend is not known yet; null when all are known,
   * as on every request but the first few of a budget's window: the caller then stays synchronous.
   */
  firstReads(principal: Principal, modelIds: ReadonlyArray<string | null>): Promise<void> | null {
    const budgets = this.budgets();
    if (budgets.length === 0) return null;
    const now = this.now();
    let reads: Array<Promise<void>> | null = null;
    for (const budget of budgets) {
      if (budget.spec.action !== 'refuse' || !modelIds.some((m) => scopeMatches(budget.spec, principal.relayKey.metadata.id, principal.policy.metadata.id, m))) continue;
      const c = this.counter(budget, now);
      if (!c.known && c.reconciled) (reads ??= []).push(c.reconciled);
    }
    return reads && within(Promise.all(reads), FRESH_WAIT_MS);
  }

  /**
   * The refusal for a request of this principal to this model when a refusing budget covering it is
   * spent or cannot count it; else null. `modifier`: the premium mode the request keeps (fast-mode.ts).
   */
  refusal(principal: Principal, modelId: string | null, modifier?: string): RelayError | null {
    const budgets = this.budgets();
    if (budgets.length === 0) return null;
    const now = this.now();
    for (const budget of budgets) {
      if (budget.spec.action !== 'refuse' || !scopeMatches(budget.spec, principal.relayKey.metadata.id, principal.policy.metadata.id, modelId)) continue;
      if (budget.spec.unpriced === 'refuse' && budget.spec.limitAmount !== undefined && modelId !== null) {
        const snapshot = this.options.snapshot();
        const uncountable = unpricedBinding(snapshot, modelId, budget.spec.currency, modifier);
        if (uncountable) return unpricedRefusal(budget, snapshot.models.get(modelId)?.metadata.slug ?? modelId, uncountable);
      }
      const counter = this.counter(budget, now);
      if (!counter.known) return unknownRefusal(budget);
      const status = this.statusOf(budget, counter);
      if (!status.exceeded) continue;
      const spent = status.limitAmount !== null && status.spentAmount >= status.limitAmount
        ? `${status.spentAmount} of ${status.limitAmount} ${status.currency}`
        : `${status.spentTokens} of ${status.limitTokens} tokens`;
      const resets = status.resetsAt === null
        ? (typeof budget.spec.window === 'object' ? 'as older spending leaves its rolling window' : 'never (a lifetime budget): raise its limit')
        : `at ${status.resetsAt}`;
      const retryAfter = secondsUntil(status.resetsAt, now);
      return new RelayError('RELAY_ERR_BUDGET_EXCEEDED',
        `Budget "${budget.metadata.displayName}" (${budget.metadata.slug}) is spent: ${spent} this ${windowName(budget.spec)}. It resets ${resets}.`,
        retryAfter === null ? {} : { headers: { 'retry-after': String(retryAfter) } });
    }
    return null;
  }

  /** A finished request's spend, added to every budget covering it (a recorder: after the response). */
  record(event: UsageEvent): void {
    const budgets = this.budgets();
    if (budgets.length === 0) return;
    const now = this.now();
    for (const budget of budgets) {
      if (!scopeMatches(budget.spec, event.relay_key_id, event.policy_id, event.model_id)) continue;
      const counter = this.windowCounter(budget, now);
      if (Date.parse(event.started_at) >= counter.startMs) this.add(budget, counter, event, now);
      // Only now: the event is queued for the usage log already, so a reconcile started here reads it (as `earlier`, not again in `local`).
      this.startDueRead(budget, counter, now);
    }
  }

  /** Adds a finished request's spend to a budget's counter (and to its shared total). */
  private add(budget: Budget, counter: Counter, event: UsageEvent, now: number): void {
    const tokens = event.input_tokens + event.output_tokens;
    const counted = event.cost !== null && event.currency === budget.spec.currency;
    if (!counted && budget.spec.limitAmount !== undefined) this.warnUncounted(budget, event);
    const delta = { micros: counted ? toMicros(event.cost!) : 0, tokens };
    counter.local = plus(counter.local, delta);
    if (counter.shared) this.addShared(budget, counter, delta, now);
    else this.counted(budget, counter);
  }

  /**
   * Tells onCounted (alerts) a counter's status, once its spend is this version's own: not while it
   * holds the spend of the version an edit replaced, whose fractions alerted under that version.
   */
  private counted(budget: Budget, c: Counter): void {
    if (c.held === null) this.options.onCounted?.(budget, this.statusOf(budget, c));
  }

  /** Says once per budget and model (in this process) that a served request added nothing to the budget's money. */
  private warnUncounted(budget: Budget, event: UsageEvent): void {
    if (event.status >= 400 || event.input_tokens + event.output_tokens === 0) return;
    const key = `${budget.metadata.id}/${event.model_id ?? ''}`;
    if (this.warnedUncounted.has(key)) return;
    if (this.warnedUncounted.size >= MAX_WARNED) this.warnedUncounted.clear();
    this.warnedUncounted.add(key);
    this.options.log.warn({ budget: budget.metadata.slug, model: event.model_slug, currency: event.currency },
      `a request counted toward no money in budget ${budget.metadata.slug}: Relay has no price for its model in ${budget.spec.currency} (add a pricings entity; unpriced: refuse refuses such requests)`);
  }

  /** Sends a request's spend to the shared store; until acknowledged it counts here. */
  private addShared(budget: Budget, c: Counter, delta: Spend, now: number): void {
    const generation = c.generation;
    this.options.shared!.add(c.total, c.startMs, c.resetsAtMs, delta).then((total) => {
      if (generation < c.foldedGeneration) {
        c.base = maxSpend(c.base, total); // a read already counted it in base
      } else {
        if (generation < c.generation) c.earlier = minus(c.earlier, delta);
        else c.local = minus(c.local, delta);
        // A total below base + delta (a Valkey that lost what it had) must not lose it.
        c.base = maxSpend(plus(c.base, delta), total);
      }
      this.increments.answered(`${budget.metadata.id}:add`, { budget: budget.metadata.slug }, 'adding to a budget\'s shared spend in Valkey answers again');
      // The shared total, every instance's spend included: the figure alerts go by.
      if (this.counters.get(budget.metadata.id) === c) this.counted(budget, c);
    }, (err: unknown) => {
      this.counted(budget, c);
      // Kept where it is counted: this instance counts it until a reconcile reads it in the usage log, the others learn it from there.
      // Over-count kept: one Valkey applied before its answer was lost counts twice here; dropping it would lose one it did not apply.
      this.increments.failed(`${budget.metadata.id}:add`, now, { err, budget: budget.metadata.slug }, 'adding to a budget\'s shared spend in Valkey failed');
    });
  }
}

/** What a counter has spent: the usage log's (or shared) figure, this instance's since, and a replaced counter's until read. */
function spentBy(c: Counter): Spend {
  return plus(plus(c.base, c.earlier), plus(c.local, c.held ?? ZERO));
}

/** Whole seconds until a reset, at least 1; null without one. */
function secondsUntil(resetsAt: string | null, now: number): number | null {
  return resetsAt === null ? null : Math.max(1, Math.ceil((Date.parse(resetsAt) - now) / 1000));
}
