// A budget's spent fraction as a bar (capped at full; the text says how far past it went).
import type { BudgetStatus } from '../api/types.ts';
import { fractionTone, percent } from './budget-format.ts';

export function BudgetMeter({ status }: { status: BudgetStatus }) {
  const tone = fractionTone(status.fraction);
  return (
    <div class="meter" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(status.fraction * 100)} aria-label="Spent of the limit">
      <div class={`meter-fill meter-${tone}`} style={{ width: `${Math.min(100, status.fraction * 100)}%` }} />
      <span class="meter-text">{percent(status.fraction)}</span>
    </div>
  );
}
