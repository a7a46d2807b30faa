// A budget's spend read from the usage log: the selected usage backend's summary over the window
// and scope (cost in micro-units, tokens as input + output). Null when no loaded backend answers
// summaries; the budget then counts this instance's requests only.
import type { Observer } from '../observer/observer.ts';
import { toMicros } from '../observer/money.ts';
import type { UsageFilter } from '../observer/types.ts';
import type { Spend } from './budget-guard.ts';

export async function budgetSpendFromLog(observer: Pick<Observer, 'usageBackend'>, filter: UsageFilter): Promise<Spend | null> {
  const backend = observer.usageBackend();
  if (!backend?.summary) return null;
  const { totals } = await backend.summary(filter);
  return { micros: toMicros(totals.cost), tokens: totals.input_tokens + totals.output_tokens };
}
