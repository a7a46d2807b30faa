// relay_budget_spent_ratio: each enabled budget's spent fraction of its limit in the current
// window (the larger of amount and tokens), read at scrape time, for a "budget near limit" alert.
// Labelled by the budget's catalog slug.
import { Gauge, type Registry } from 'prom-client';
import type { Budget } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { BudgetGuard } from './budget-guard.ts';

export function registerBudgetMetrics(registry: Registry, guard: BudgetGuard, snapshot: () => CatalogSnapshot): void {
  new Gauge({
    name: 'relay_budget_spent_ratio', help: "A budget's spend in its current window as a fraction of its limit (1 = spent), by budget slug",
    labelNames: ['budget'], registers: [registry],
    collect() {
      this.reset();
      for (const budget of snapshot().byKind('budgets').values() as Iterable<Budget>) {
        if (budget.spec.enabled === false) continue;
        this.set({ budget: budget.metadata.slug }, guard.status(budget).fraction);
      }
    },
  });
}
