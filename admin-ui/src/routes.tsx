// Which page a path shows. Paths are real, so any of them can be opened directly.
import type { KindName, RelayConfig, Whoami } from './api/types.ts';
import { Link, matchPath, navigate, useLocation } from './router.tsx';
import { useEffect } from 'preact/hooks';
import { isKindName } from './catalog/kinds.ts';
import { ListPage } from './catalog/list-page.tsx';
import { EntityPage } from './catalog/entity-page.tsx';
import { LogsPage } from './logs/logs-page.tsx';
import { LogDetailPage } from './logs/log-detail-page.tsx';
import { UsagePage } from './usage/usage-page.tsx';
import { SessionsPage } from './sessions/sessions-page.tsx';
import { SessionPage } from './sessions/session-page.tsx';
import { BudgetsPage } from './budgets/budgets-page.tsx';
import { BudgetPage } from './budgets/budget-page.tsx';
import { SettingsPage } from './settings/settings-page.tsx';
import { UsersPage } from './users/users-page.tsx';
import { AuditPage } from './audit/audit-page.tsx';
import { AccountPage } from './users/account-page.tsx';
import { PageHeader } from './ui/page-header.tsx';
import { EmptyState } from './ui/states.tsx';

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title="There is nothing at this address" action={<Link class="btn btn-primary" href="/usage">Go to usage</Link>} />
    </>
  );
}

export function Routes({ config, user }: { config: RelayConfig | null; user: Whoami }) {
  const { path } = useLocation();
  let m: Record<string, string> | null;
  if (path === '/' || path === '/sign-in') return <Redirect to="/usage" />;
  if (path === '/usage') return <UsagePage />;
  if (path === '/sessions') return <SessionsPage />;
  if ((m = matchPath('/sessions/:sessionId', path))) return <SessionPage key={m.sessionId} sessionId={m.sessionId} />;
  if (path === '/logs') return <LogsPage />;
  if ((m = matchPath('/logs/:requestId', path))) return <LogDetailPage key={m.requestId} requestId={m.requestId} />;
  if (path === '/settings') return <SettingsPage config={config} />;
  if (path === '/users') return <UsersPage />;
  if (path === '/audit') return <AuditPage />;
  if (path === '/account') return <AccountPage user={user} />;
  if (path === '/budgets') return <BudgetsPage />;
  if ((m = matchPath('/budgets/:budgetId', path))) return <BudgetPage key={m.budgetId} budgetId={m.budgetId} />;
  // Budgets are listed with their spend on /budgets; /catalog/budgets/<id> is the edit form.
  if (path === '/catalog/budgets') return <Redirect to="/budgets" />;
  if (path === '/catalog') return <Redirect to="/catalog/providers" />;
  if ((m = matchPath('/catalog/:kind', path)) && isKindName(m.kind)) return <ListPage key={m.kind} kind={m.kind as KindName} />;
  if ((m = matchPath('/catalog/:kind/:ref', path)) && isKindName(m.kind)) return <EntityPage key={`${m.kind}/${m.ref}`} kind={m.kind as KindName} entityRef={m.ref} />;
  return <NotFound />;
}
