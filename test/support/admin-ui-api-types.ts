// The dashboard (admin-ui/) declares the admin API's shapes in its own types.ts: its build does
// not reach into core/. This file holds them equal to core's, so that a change on one side that
// the other misses fails `npm run typecheck` (test/ is in its scope) instead of a page at run time.
// No runtime code: the checks are types.
import type * as Ui from '../../admin-ui/src/api/types.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import type { SessionSummary, UsageTotals } from '../../core/observer/types.ts';
import type { SummaryWithCosts } from '../../core/observer/costs-by-currency.ts';
import type { PayloadLoggingSetting, UsageLoggingSetting } from '../../core/settings/types.ts';
import type { KeyState } from '../../core/pipeline/key-health.ts';
import type { BudgetStatus } from '../../core/budgets/budget-guard.ts';
import type { BudgetAlertRecord } from '../../core/budgets/alert-store.ts';
import type { BurnDownPoint, Projection } from '../../core/budgets/burn-down.ts';

/** True only when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
type Holds<T extends true> = T;

export type AdminUiApiTypesMatchCore = [
  Holds<Equal<Ui.UsageEvent, UsageEvent>>,
  Holds<Equal<Ui.UsageTotals, UsageTotals>>,
  Holds<Equal<Ui.UsageSummary, SummaryWithCosts>>,
  Holds<Equal<Ui.SessionSummary, SessionSummary>>,
  Holds<Equal<Ui.UsageLoggingSetting, UsageLoggingSetting>>,
  Holds<Equal<Ui.PayloadLoggingSetting, PayloadLoggingSetting>>,
  Holds<Equal<Ui.HealthState, KeyState>>,
  Holds<Equal<Ui.BudgetStatus, BudgetStatus>>,
  Holds<Equal<Ui.BudgetAlert, BudgetAlertRecord>>,
  Holds<Equal<Ui.BudgetBurnDown['points'][number], BurnDownPoint>>,
  Holds<Equal<NonNullable<Ui.BudgetBurnDown['projection']>, Projection>>,
];
