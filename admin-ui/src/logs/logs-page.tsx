// The request log, newest first: filters in the URL, a table, "Load more" paging, an
// auto-refresh toggle and a CSV export of the rows loaded.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { KindName, UsageEvent } from '../api/types.ts';
import { errorMessage } from '../api/client.ts';
import { Link, navigate, setQuery, useLocation } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { StatusBadge } from '../ui/badge.tsx';
import { useAsync } from '../ui/use-async.ts';
import { nameOf, useReferences } from '../catalog/use-references.ts';
import { formatCompact, formatDateTime, formatMs, formatRelative } from '../format.ts';
import { FILTER_KEYS, listLogs, type LogFilters } from './logs-api.ts';
import { FiltersBar } from './filters-bar.tsx';
import { costText, isUnpriced, UNPRICED_HINT } from './cost-text.ts';
import { logsCsv } from './logs-csv.ts';
import { downloadText } from '../ui/download.ts';

/** How often the list reloads with auto-refresh on. */
const AUTO_REFRESH_MS = 5_000;

const REF_KINDS: KindName[] = ['relay-keys', 'policies', 'models'];

export function LogsPage() {
  const { query } = useLocation();
  const filters = useMemo(() => {
    const f: LogFilters = {};
    for (const key of FILTER_KEYS) { const v = query.get(key); if (v) f[key] = v; }
    return f;
  }, [query.toString()]);
  const refs = useReferences(REF_KINDS);
  const first = useAsync(() => listLogs(filters, null), [JSON.stringify(filters)]);
  const [more, setMore] = useState<{ items: UsageEvent[]; cursor: string | null; loading: boolean; error: string | null }>({ items: [], cursor: null, loading: false, error: null });
  useEffect(() => { setMore({ items: [], cursor: first.data?.nextCursor ?? null, loading: false, error: null }); }, [first.data]);
  const [autoRefresh, setAutoRefresh] = useState(false);
  // The next reload is due AUTO_REFRESH_MS after the last one finished: a slow read is never cut short by the next.
  useEffect(() => {
    if (!autoRefresh || first.loading) return undefined;
    const timer = setTimeout(() => first.reload(), AUTO_REFRESH_MS);
    return () => clearTimeout(timer);
  }, [autoRefresh, first.loading, first.reload]);

  const loadMore = async () => {
    if (!more.cursor) return;
    setMore((m) => ({ ...m, loading: true, error: null }));
    try {
      const page = await listLogs(filters, more.cursor);
      setMore((m) => ({ items: [...m.items, ...page.items], cursor: page.nextCursor, loading: false, error: null }));
    } catch (err) {
      setMore((m) => ({ ...m, loading: false, error: errorMessage(err) }));
    }
  };

  const items = [...(first.data?.items ?? []), ...more.items];
  const modelName = (e: UsageEvent) => e.model_slug ?? e.model_requested ?? '—';
  const filtered = Object.values(filters).some(Boolean);
  const keyName = (id: string | null) => (id ? nameOf(refs.data, 'relay-keys', id) : '—');
  const exportCsv = () => downloadText(`relay-logs-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.csv`, logsCsv(items, keyName));

  return (
    <>
      <PageHeader title="Logs" subtitle="Every request through the inference port, newest first."
        actions={<>
          <label class="toggle" title={`Reload every ${AUTO_REFRESH_MS / 1000} s`}>
            <input type="checkbox" id="logs-auto-refresh" checked={autoRefresh} onChange={(ev) => setAutoRefresh((ev.target as HTMLInputElement).checked)} /> Auto-refresh
          </label>
          <button type="button" class="btn" onClick={exportCsv} disabled={items.length === 0} title="The rows loaded below, filters applied">Export CSV</button>
          <button type="button" class="btn" onClick={first.reload} disabled={first.loading}>{first.loading ? 'Refreshing…' : 'Refresh'}</button>
        </>} />
      <FiltersBar filters={filters} refs={refs.data} onChange={(change) => setQuery(change as Record<string, string | undefined>)} />
      {first.error ? <ErrorBanner error={first.error} onRetry={first.reload} />
        : !first.data ? <Spinner label="Loading requests…" />
        : items.length === 0 ? (
          <EmptyState title={filtered ? 'No requests match these filters' : 'No requests yet'}>
            {filtered ? 'Try a wider time window or reset the filters.' : 'Requests made with a relay key on the inference port appear here within a few seconds.'}
          </EmptyState>
        ) : (
          <div class="table-wrap card">
            <table class="table table-logs">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Status</th>
                  <th scope="col">Model</th>
                  <th scope="col" class="col-optional">Key</th>
                  <th scope="col" class="num col-optional">Tokens in / out</th>
                  <th scope="col" class="num col-optional">Cost</th>
                  <th scope="col" class="num col-optional">Latency</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.request_id} class="row-clickable" onClick={(ev) => { if (!(ev.target as HTMLElement).closest('a')) navigate(`/logs/${encodeURIComponent(e.request_id)}`); }}>
                    <td>
                      <Link class="row-link" href={`/logs/${encodeURIComponent(e.request_id)}`} title={formatDateTime(e.started_at)}>{formatRelative(e.started_at)}</Link>
                      <div class="muted mono small">{e.request_id.slice(0, 13)}</div>
                    </td>
                    <td>
                      <StatusBadge status={e.status} />{e.stream && <span class="muted small"> stream</span>}
                      {e.error_code && <div class="mono small error-code">{e.error_code}</div>}
                    </td>
                    <td><span class="mono">{modelName(e)}</span>{e.client && <div class="muted small">{e.client}</div>}</td>
                    <td class="col-optional">
                      {e.relay_key_id ? keyName(e.relay_key_id) : '—'}
                      {e.relay_key_prefix && <div class="muted mono small">{e.relay_key_prefix}</div>}
                    </td>
                    <td class="num col-optional">{formatCompact(e.input_tokens)} / {formatCompact(e.output_tokens)}</td>
                    <td class="num col-optional">{isUnpriced(e) ? <span class="muted" title={UNPRICED_HINT}>{costText(e)}</span> : costText(e)}</td>
                    <td class="num col-optional">{formatMs(e.latency_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      {more.error && <ErrorBanner error={new Error(more.error)} onRetry={() => void loadMore()} />}
      {more.cursor && !more.error && (
        <div class="pager"><button type="button" class="btn" disabled={more.loading} onClick={() => void loadMore()}>{more.loading ? 'Loading…' : 'Load older requests'}</button></div>
      )}
    </>
  );
}
