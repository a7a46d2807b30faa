// The audit trail (admins): every change made through the control API, refused ones included,
// and every sign-in, newest first; filters by user and by entity id, "Load older" paging.
import { useEffect, useState } from 'preact/hooks';
import { errorMessage } from '../api/client.ts';
import { formatDateTime, formatRelative } from '../format.ts';
import { Link } from '../router.tsx';
import { StatusBadge } from '../ui/badge.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { auditAction, auditTargetHref } from './audit-action.ts';
import { listAudit, type AuditEntry, type AuditFilter } from './audit-api.ts';

interface Listing {
  items: AuditEntry[];
  cursor: string | null;
  loading: boolean;
  error: unknown;
}

function AuditRow({ entry }: { entry: AuditEntry }) {
  const href = auditTargetHref(entry);
  const shown = entry.targetName ?? entry.target;
  return (
    <tr data-audit-id={entry.id}>
      <td title={formatDateTime(entry.at)}>{formatRelative(entry.at)}</td>
      <td>{entry.actor.kind === 'admin-token' ? <span class="muted">admin token</span>
        : entry.actor.kind === 'cli' ? <>{entry.actor.name ?? '—'} <span class="muted small">(CLI)</span></>
        : entry.actor.kind === 'catalog-file' ? <><span class="mono small">{entry.actor.name}</span> <span class="muted small">(catalog.file at start)</span></> : entry.actor.name}</td>
      <td>{auditAction(entry)}<div class="muted small mono">{entry.method} {entry.route}</div></td>
      <td class="mono small" title={entry.target ?? undefined}>{entry.target === null ? '—' : href ? <Link href={href}>{shown}</Link> : shown}</td>
      <td><StatusBadge status={entry.status} /></td>
      <td class="mono small col-optional">{entry.clientIp}</td>
    </tr>
  );
}

export function AuditPage() {
  const [filter, setFilter] = useState<AuditFilter>({});
  const [draft, setDraft] = useState<AuditFilter>({});
  const [listing, setListing] = useState<Listing>({ items: [], cursor: null, loading: true, error: null });

  const load = (before?: string) => {
    setListing((l) => ({ ...l, loading: true, error: null }));
    listAudit(filter, before).then(
      (page) => setListing((l) => ({ items: before ? [...l.items, ...page.items] : page.items, cursor: page.nextCursor, loading: false, error: null })),
      (error: unknown) => setListing((l) => ({ ...l, loading: false, error })),
    );
  };
  useEffect(() => load(), [filter]);

  const filtered = Boolean(filter.actor || filter.target);
  const first = listing.items.length === 0;
  return (
    <>
      <PageHeader title="Audit trail" subtitle="Every change made through the admin API or this dashboard, refused ones included, and every sign-in. Request bodies are never kept." />
      <form class="filters card" role="search" aria-label="Filter the audit trail" onSubmit={(e) => { e.preventDefault(); setFilter({ actor: draft.actor?.trim() || undefined, target: draft.target?.trim() || undefined }); }}>
        <label class="filter" for="audit-actor">
          <span class="filter-label">User</span>
          <input id="audit-actor" class="input" placeholder="username" value={draft.actor ?? ''} onInput={(e) => setDraft({ ...draft, actor: e.currentTarget.value })} />
        </label>
        <label class="filter" for="audit-target">
          <span class="filter-label">Entity id</span>
          <input id="audit-target" class="input mono" placeholder="an id or a username" value={draft.target ?? ''} onInput={(e) => setDraft({ ...draft, target: e.currentTarget.value })} />
        </label>
        <div class="filter filter-reset filter-inline">
          <button type="submit" class="btn">Filter</button>
          {filtered && <button type="button" class="btn btn-ghost" onClick={() => { setDraft({}); setFilter({}); }}>Reset</button>}
        </div>
      </form>
      {listing.error && first ? <ErrorBanner error={listing.error} onRetry={() => load()} />
        : listing.loading && first ? <Spinner label="Loading the audit trail…" />
        : first ? (
          <EmptyState title={filtered ? 'Nothing matches these filters' : 'No changes yet'}>
            {filtered ? 'The user filter takes a username exactly; the entity filter an id exactly.' : 'Changes to the catalog, keys, users and settings appear here as they are made.'}
          </EmptyState>
        ) : (
          <div class="table-wrap card">
            <table class="table table-audit">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">Entity</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="col-optional">From</th>
                </tr>
              </thead>
              <tbody>{listing.items.map((e) => <AuditRow key={e.id} entry={e} />)}</tbody>
            </table>
          </div>
        )}
      {listing.error && !first && <p class="field-error" role="alert">{errorMessage(listing.error)}</p>}
      {listing.cursor && (
        <div class="pager"><button type="button" class="btn" disabled={listing.loading} onClick={() => load(listing.cursor!)}>{listing.loading ? 'Loading…' : 'Load older changes'}</button></div>
      )}
    </>
  );
}
