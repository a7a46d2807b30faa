// A budget's spend read from the usage log: the selected usage backend's summary over the window
// and scope (cost in micro-units, tokens as input + output). Null when no loaded backend answers
// summaries; the budget then counts this instance's requests only. Read once the usage events
// this instance recorded before the call are written: the budget's reconcile takes what it had
// counted until then as in the log (budget-guard.ts), so a queued event must not be missing from it.
// The wait is bounded: a usage log failing its writes (retrying for minutes) must not hold the
// read; queued spend may then be missed until the next reconcile.
// With a currency in the filter, the cost is that of the events priced in it only, and the tokens
// are those of every event in scope, in any currency or none: what the budget counts locally for a
// finished request (BudgetGuard.record). That takes two summaries, asked at once.
import type { Observer } from '../observer/observer.ts';
import { toMicros } from '../observer/money.ts';
import type { UsageFilter } from '../observer/types.ts';
import type { Spend } from './budget-guard.ts';

/** Longest a read waits for this instance's queued usage events to be written. */
export const QUEUE_WAIT_MS = 5_000;

async function writtenOrLater(written: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([written, new Promise<void>((resolve) => { timer = setTimeout(resolve, QUEUE_WAIT_MS); })]);
  clearTimeout(timer);
}

export async function budgetSpendFromLog(observer: Pick<Observer, 'usageBackend' | 'usageWritten'>, filter: UsageFilter): Promise<Spend | null> {
  await writtenOrLater(observer.usageWritten());
  const backend = observer.usageBackend();
  if (!backend?.summary) return null;
  const { currency, ...everyCurrency } = filter;
  const [priced, all] = await Promise.all([
    backend.summary(filter),
    currency === undefined ? null : backend.summary(everyCurrency),
  ]);
  const tokens = (all ?? priced).totals;
  return { micros: toMicros(priced.totals.cost), tokens: tokens.input_tokens + tokens.output_tokens };
}
