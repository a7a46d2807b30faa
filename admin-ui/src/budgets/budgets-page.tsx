// Budgets with what each has spent in its current window (GET /api/usage/budgets): a meter per
// budget, the nearest to its limit first (the API's order); one click opens its burn-down and alerts, "New budget" the form.
import type { BudgetUsage } from '../api/types.ts';
import { Link, navigate } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Badge } from '../ui/badge.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { useAsync } from '../ui/use-async.ts';
import { formatDateTime } from '../format.ts';
import { listBudgetUsage } from './budgets-api.ts';
import { BudgetMeter } from './budget-meter.tsx';
import { spentText, windowText } from './budget-format.ts';

export const budgetHref = (id: string) => `/budgets/${encodeURIComponent(id)}`;

function scopeText(b: BudgetUsage): string {
  if (b.scope.relayKeyId) return 'one relay key';
  if (b.scope.policyId) return 'one policy';
  if (b.scope.modelId) return 'one model';
  return 'everything';
}

function Row({ b }: { b: BudgetUsage }) {
  return (
    <tr class="row-clickable" onClick={(ev) => { if (!(ev.target as HTMLElement).closest('a')) navigate(budgetHref(b.budgetId)); }}>
      <td>
        <Link class="row-link" href={budgetHref(b.budgetId)}>{b.displayName}</Link>
        <div class="muted small">{scopeText(b)} · {windowText(b.window)}</div>
      </td>
      <td class="budget-meter-cell"><BudgetMeter status={b.status} /></td>
      <td class="num">{spentText(b.status)}</td>
      <td class="col-optional">{b.status.resetsAt ? formatDateTime(b.status.resetsAt) : <span class="muted">never</span>}</td>
      <td>{!b.enabled ? <Badge tone="gray">disabled</Badge> : b.status.exceeded ? <Badge tone="red">spent</Badge> : <Badge tone="green">within</Badge>}</td>
    </tr>
  );
}

export function BudgetsPage() {
  const list = useAsync(() => listBudgetUsage(), []);
  return (
    <>
      <PageHeader title="Budgets" subtitle="Spend in each budget's current window, against its limit."
        actions={<><button type="button" class="btn" onClick={list.reload}>Refresh</button><Link class="btn btn-primary" href="/catalog/budgets/new">New budget</Link></>} />
      {list.error ? <ErrorBanner error={list.error} onRetry={list.reload} />
        : !list.data ? <Spinner />
        : list.data.budgets.length === 0 ? (
          <EmptyState title="No budgets yet" action={<Link class="btn btn-primary" href="/catalog/budgets/new">Create the first budget</Link>}>
            A budget caps spend over a day, week, month or for good, for one relay key, policy or model or for everything, and alerts on the way.
          </EmptyState>
        ) : (
          <section class="card table-wrap">
            <table class="table table-budgets">
              <thead>
                <tr>
                  <th scope="col">Budget</th>
                  <th scope="col">Spent</th>
                  <th scope="col" class="num">Of the limit</th>
                  <th scope="col" class="col-optional">Resets</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>{list.data.budgets.map((b) => <Row key={b.budgetId} b={b} />)}</tbody>
            </table>
          </section>
        )}
    </>
  );
}
