// The list of one catalog kind: search (kept in the URL), a table, paging, and an empty state.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Entity, KindName } from '../api/types.ts';
import { Link, setQuery, useLocation } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { takeFlash } from '../ui/flash.ts';
import { useAsync } from '../ui/use-async.ts';
import { errorMessage } from '../api/client.ts';
import { formatRelative } from '../format.ts';
import { hostKeyHealth, listPage, keysLastUsed } from './catalog-api.ts';
import { COLUMNS } from './columns.tsx';
import { KIND_INFO, referencedKinds } from './kinds.ts';
import { useReferences } from './use-references.ts';

const PAGE_SIZE = 50;

export function ListPage({ kind }: { kind: KindName }) {
  const info = KIND_INFO[kind];
  const { query } = useLocation();
  const q = query.get('q') ?? '';
  const [search, setSearch] = useState(q);
  const [extra, setExtra] = useState<{ items: Entity[]; cursor: string | null; loading: boolean; error: string | null }>({ items: [], cursor: null, loading: false, error: null });
  const [notice] = useState(() => takeFlash());
  const first = useAsync(() => listPage(kind, { limit: PAGE_SIZE, q }), [kind, q]);
  const refs = useReferences(useMemo(() => referencedKinds(kind), [kind]));
  const health = useAsync(() => (kind === 'host-keys' ? hostKeyHealth() : Promise.resolve(undefined)), [kind]);
  const lastUsed = useAsync(() => (kind === 'relay-keys' || kind === 'host-keys' ? keysLastUsed(kind) : Promise.resolve(undefined)), [kind]);

  useEffect(() => { setSearch(q); }, [kind, q]);
  useEffect(() => { setExtra({ items: [], cursor: first.data?.nextCursor ?? null, loading: false, error: null }); }, [first.data]);
  useEffect(() => {
    if (search === q) return;
    const t = setTimeout(() => setQuery({ q: search.trim() || undefined }), 250);
    return () => clearTimeout(t);
  }, [search]);

  const loadMore = async () => {
    if (!extra.cursor) return;
    setExtra((x) => ({ ...x, loading: true, error: null }));
    try {
      const page = await listPage(kind, { limit: PAGE_SIZE, q, cursor: extra.cursor });
      setExtra((x) => ({ items: [...x.items, ...page.items], cursor: page.nextCursor, loading: false, error: null }));
    } catch (err) {
      setExtra((x) => ({ ...x, loading: false, error: errorMessage(err) }));
    }
  };

  const items = [...(first.data?.items ?? []), ...extra.items];
  const columns = COLUMNS[kind];

  return (
    <>
      <PageHeader title={info.title} subtitle={info.description}
        actions={<Link class="btn btn-primary" href={`/catalog/${kind}/new`}>New {info.singular}</Link>} />
      {notice && <div class="banner banner-success" role="status">{notice}</div>}
      <div class="toolbar">
        <label class="search">
          <span class="visually-hidden">Search {info.title.toLowerCase()}</span>
          <input class="input" type="search" placeholder={`Search ${info.title.toLowerCase()}…`} value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        {first.loading && first.data && <span class="spinner spinner-inline" aria-label="Refreshing" />}
      </div>
      {first.error ? <ErrorBanner error={first.error} onRetry={first.reload} />
        : !first.data ? <Spinner />
        : items.length === 0 ? (
          q ? <EmptyState title={`No ${info.title.toLowerCase()} match “${q}”`} action={<button type="button" class="btn" onClick={() => setSearch('')}>Clear search</button>} />
            : <EmptyState title={`No ${info.title.toLowerCase()} yet`} action={<Link class="btn btn-primary" href={`/catalog/${kind}/new`}>Create the first {info.singular}</Link>}>{info.description}</EmptyState>
        ) : (
          <div class="table-wrap card">
            <table class="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {columns.map((c) => <th scope="col" key={c.label} class={c.optional ? 'col-optional' : undefined}>{c.label}</th>)}
                  <th scope="col" class="col-optional">Updated</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.metadata.id}>
                    <td>
                      <Link class="row-link" href={`/catalog/${kind}/${e.metadata.id}`}>{e.metadata.displayName}</Link>
                      <div class="muted mono small">{e.metadata.slug}</div>
                    </td>
                    {columns.map((c) => <td key={c.label} class={c.optional ? 'col-optional' : undefined}>{c.cell(e, { refs: refs.data, health: health.data, lastUsed: lastUsed.data })}</td>)}
                    <td class="col-optional muted" title={e.metadata.updatedAt}>{formatRelative(e.metadata.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      {extra.error && <ErrorBanner error={new Error(extra.error)} onRetry={() => void loadMore()} />}
      {extra.cursor && !extra.error && (
        <div class="pager"><button type="button" class="btn" disabled={extra.loading} onClick={() => void loadMore()}>{extra.loading ? 'Loading…' : 'Load more'}</button></div>
      )}
    </>
  );
}
