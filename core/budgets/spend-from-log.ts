// A budget's spend read from the usage log: the selected usage backend's summary over the window
// and scope (cost in micro-units, tokens as input + output). Null when no loaded backend answers
// summaries; the budget then counts this instance's requests only. Read once the usage events
// this instance recorded before the call are written: the budget's reconcile takes what it had
// counted until then as in the log (budget-guard.ts), so a queued event must not be missing from it.
// The wait is bounded: a usage log failing or stalling its writes (retrying for minutes; a table
// locked for writes while it still answers reads) must not hold the read. Such a figure is marked
// `partial`: it may lack spend still queued, which the budget then keeps counting itself.
// With a currency in the filter, the cost is that of the events priced in it only, and the tokens
// are those of every event in scope, in any currency or none: what the budget counts locally for a
// finished request (BudgetGuard.record). One summary grouped by currency answers both: the tokens
// from its totals, the cost from its group of that currency. A backend that answers no groups (an
// in-house one that does not know groupBy `currency`) is asked the currency-filtered summary too.
import type { Observer } from '../observer/observer.ts';
import { toMicros } from '../observer/money.ts';
import type { Summary, SummaryQuery, UsageFilter, UsageTotals } from '../observer/types.ts';
import type { LogSpend, Spend } from './budget-guard.ts';

/** Longest a read waits for this instance's queued usage events to be written. */
export const QUEUE_WAIT_MS = 5_000;

/** Whether the queue was written within QUEUE_WAIT_MS (false: the read goes ahead without it). */
async function writtenInTime(written: Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([written.then(() => true), new Promise<boolean>((resolve) => { timer = setTimeout(resolve, QUEUE_WAIT_MS, false); })]);
  clearTimeout(timer);
  return inTime;
}

export async function budgetSpendFromLog(observer: Pick<Observer, 'usageBackend' | 'usageWritten'>, filter: UsageFilter): Promise<LogSpend | null> {
  const written = await writtenInTime(observer.usageWritten());
  const backend = observer.usageBackend();
  if (!backend?.summary) return null;
  const summary = backend.summary.bind(backend);
  const totals = filter.currency === undefined ? (await summary(filter)).totals : await totalsInCurrency(summary, filter, filter.currency);
  const spend = spendOf(totals.cost, totals);
  return written ? spend : { ...spend, partial: true };
}

/**
 * The totals of `filter` (whatever its own currency) over every currency, their cost that of the
 * events priced in `currency` only: one summary grouped by currency, and a currency-filtered one
 * for the cost from a backend that answers no groups. What a budget counts; its usage views
 * (core/control/budget-usage-routes.ts) read it too.
 */
export async function totalsInCurrency(summary: (query: SummaryQuery) => Promise<Summary>, filter: UsageFilter, currency: string): Promise<UsageTotals> {
  const everyCurrency: UsageFilter = { ...filter };
  delete everyCurrency.currency;
  const byCurrency = await summary({ ...everyCurrency, groupBy: 'currency' });
  const cost = byCurrency.groups
    ? byCurrency.groups.find((g) => g.key === currency)?.totals.cost ?? 0
    : (await summary({ ...everyCurrency, currency })).totals.cost;
  return { ...byCurrency.totals, cost };
}

const spendOf = (cost: number, tokens: UsageTotals): Spend => ({ micros: toMicros(cost), tokens: tokens.input_tokens + tokens.output_tokens });
