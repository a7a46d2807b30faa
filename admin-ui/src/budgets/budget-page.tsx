// One budget: what it spent, what is left and when it resets; its burn-down with the projection
// to the window's end; and the alerts it fired, with each webhook's outcome.
import type { ComponentChildren } from 'preact';
import type { BudgetAlert, Entity } from '../api/types.ts';
import { Link } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { Badge } from '../ui/badge.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { useAsync } from '../ui/use-async.ts';
import { formatCompact, formatCost, formatDateTime } from '../format.ts';
import { getEntity } from '../catalog/catalog-api.ts';
import { getBurnDown, listAlerts } from './budgets-api.ts';
import { BurnDownChart } from './burn-down-chart.tsx';
import { BudgetMeter } from './budget-meter.tsx';
import { percent, spentText, windowText } from './budget-format.ts';

function Stat({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="stat"><div class="stat-label">{label}</div><div class="stat-value">{children}</div></div>;
}

const ALERT_TONE = { delivered: 'green', failed: 'red', fired: 'blue' } as const;

function AlertsTable({ alerts }: { alerts: BudgetAlert[] }) {
  if (alerts.length === 0) return <EmptyState title="No alerts yet">An alert fires once per alertAt fraction per window, when spend first reaches it.</EmptyState>;
  return (
    <section class="card table-wrap">
      <table class="table table-alerts">
        <thead>
          <tr>
            <th scope="col">Fired</th>
            <th scope="col" class="num">At</th>
            <th scope="col" class="num col-optional">Spent then</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="col-optional">Webhooks</th>
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <tr key={a.id}>
              <td>{formatDateTime(a.firedAt)}<div class="muted small">window from {formatDateTime(a.windowStart)}</div></td>
              <td class="num">{percent(a.threshold)}</td>
              <td class="num col-optional">{formatCost(a.spentAmount, a.currency)} · {formatCompact(a.spentTokens)} tokens</td>
              <td><Badge tone={ALERT_TONE[a.status]}>{a.status}</Badge></td>
              <td class="col-optional small">
                {a.deliveries.length === 0 ? <span class="muted">none configured</span> : a.deliveries.map((d, i) => (
                  <div key={i}><span class="mono">{d.target}</span> ({d.format}): {d.status}{d.attempts > 1 ? `, ${d.attempts} attempts` : ''}{d.lastError ? ` — ${d.lastError}` : ''}</div>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function BudgetPage({ budgetId }: { budgetId: string }) {
  const entity = useAsync(() => getEntity('budgets', budgetId), [budgetId]);
  const burnDown = useAsync(() => getBurnDown(budgetId), [budgetId]);
  const alerts = useAsync(() => listAlerts(budgetId), [budgetId]);
  const back = <Link href="/budgets">← Budgets</Link>;
  if (entity.error) return <><PageHeader title="Budget" back={back} /><ErrorBanner error={entity.error} onRetry={entity.reload} /></>;
  if (!entity.data) return <Spinner />;
  const budget = entity.data as Entity<{ window: Parameters<typeof windowText>[0]; timezone: string; action: string }>;
  const reload = () => { burnDown.reload(); alerts.reload(); };
  const status = burnDown.data?.status;
  return (
    <>
      <PageHeader title={budget.metadata.displayName}
        subtitle={<><span class="mono">{budget.metadata.slug}</span> · {windowText(budget.spec.window)} ({budget.spec.timezone}) · at 100%: {budget.spec.action}</>}
        back={back}
        actions={<><button type="button" class="btn" onClick={reload}>Refresh</button><Link class="btn btn-primary" href={`/catalog/budgets/${budget.metadata.id}`}>Edit</Link></>} />
      {burnDown.error ? <ErrorBanner error={burnDown.error} onRetry={burnDown.reload} /> : !burnDown.data || !status ? <Spinner /> : (
        <>
          <div class="stats card">
            <Stat label="Spent">{spentText(status)}<BudgetMeter status={status} /></Stat>
            <Stat label="Remaining">{status.remainingAmount !== null ? formatCost(status.remainingAmount, status.currency) : `${formatCompact(status.remainingTokens)} tokens`}</Stat>
            <Stat label="Resets">{status.resetsAt ? formatDateTime(status.resetsAt) : <span class="muted">never</span>}</Stat>
            <Stat label="Projected by then">
              {burnDown.data.projection
                ? <span class="budget-projection">{status.limitAmount !== null ? formatCost(burnDown.data.projection.amount, status.currency) : `${formatCompact(burnDown.data.projection.tokens)} tokens`}</span>
                : <span class="muted">no window end</span>}
              {burnDown.data.projection?.limitReachedAt && !status.exceeded && <div class="muted small">limit reached {formatDateTime(burnDown.data.projection.limitReachedAt)}</div>}
            </Stat>
          </div>
          <BurnDownChart burnDown={burnDown.data} />
        </>
      )}
      <h2 class="section-title">Alerts</h2>
      {alerts.error ? <ErrorBanner error={alerts.error} onRetry={alerts.reload} /> : !alerts.data ? <Spinner /> : <AlertsTable alerts={alerts.data.alerts} />}
    </>
  );
}
