// Agent sessions over a window, the costliest first (or the last active): turns, models, tokens,
// cache hit ratio, cost and duration per Codex thread or Claude Code session; one click opens one.
// Sessions priced in more than one currency are ordered by tokens (the API's order), and say so.
// A session is one relay key's: each row names its key and opens that key's session only.
import type { SessionSummary } from '../api/types.ts';
import { Link, navigate, setQuery, useLocation } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { useAsync } from '../ui/use-async.ts';
import { formatCompact, formatDateTime, formatRelative } from '../format.ts';
import { Segmented } from '../usage/usage-page.tsx';
import { WINDOW_SECONDS } from '../usage/series.ts';
import { listSessions, type SessionSort } from './sessions-api.ts';
import { formatDuration, formatRatio, modelsLine, pricedInSeveralCurrencies, sessionCost } from './session-format.ts';

/** The page of one key's session with the id (without a key: every request with the id). */
export const sessionHref = (id: string, relayKeyId: string | null) =>
  `/sessions/${encodeURIComponent(id)}${relayKeyId === null ? '' : `?relayKeyId=${encodeURIComponent(relayKeyId)}`}`;

function Row({ s }: { s: SessionSummary }) {
  const href = sessionHref(s.session_id, s.relay_key_id);
  return (
    <tr class="row-clickable" onClick={(ev) => { if (!(ev.target as HTMLElement).closest('a')) navigate(href); }}>
      <td>
        <Link class="row-link mono" href={href}>{s.session_id.length > 18 ? `${s.session_id.slice(0, 18)}…` : s.session_id}</Link>
        <div class="muted small">{s.client ?? 'unknown client'}</div>
      </td>
      <td class="mono small" title={s.relay_key_id ?? undefined} data-testid="session-key">{s.relay_key_prefix ?? s.relay_key_id ?? 'no key'}</td>
      <td class="num">{formatCompact(s.turns)}</td>
      <td class="col-optional mono small" title={s.models.join(', ')}>{modelsLine(s)}</td>
      <td class="num col-optional">{formatCompact(s.totals.input_tokens)} / {formatCompact(s.totals.output_tokens)}</td>
      <td class="num col-optional">{formatRatio(s.cache_hit_ratio)}</td>
      <td class="num">{sessionCost(s)}</td>
      <td class="num col-optional">{formatDuration(s.duration_ms)}</td>
      <td class="col-optional" title={formatDateTime(s.last_finished_at)}>{formatRelative(s.last_finished_at)}</td>
    </tr>
  );
}

export function SessionsPage() {
  const { query } = useLocation();
  const since = WINDOW_SECONDS[query.get('since') ?? ''] ? query.get('since')! : '24h';
  const sort: SessionSort = query.get('sort') === 'recent' ? 'recent' : 'cost';
  const list = useAsync(() => listSessions(since, sort), [since, sort]);
  return (
    <>
      <PageHeader title="Sessions" subtitle="Codex threads and Claude Code sessions: what each one used and cost."
        actions={<button type="button" class="btn" onClick={list.reload}>Refresh</button>} />
      <div class="toolbar toolbar-wrap">
        <Segmented label="Time window" value={since} onChange={(v) => setQuery({ since: v })}
          options={[{ value: '1h', label: '1 hour' }, { value: '24h', label: '24 hours' }, { value: '7d', label: '7 days' }, { value: '30d', label: '30 days' }]} />
        <Segmented label="Order" value={sort} onChange={(v) => setQuery({ sort: v === 'cost' ? undefined : v })}
          options={[{ value: 'cost', label: 'Costliest' }, { value: 'recent', label: 'Most recent' }]} />
      </div>
      {list.error ? <ErrorBanner error={list.error} onRetry={list.reload} />
        : !list.data ? <Spinner />
        : list.data.sessions.length === 0 ? (
          <EmptyState title="No agent sessions in this window">Requests from Codex (through agent-codex) and Claude Code (in proxy mode) are grouped here by their thread or session id.</EmptyState>
        ) : (
          <section class="card table-wrap">
            {sort === 'cost' && pricedInSeveralCurrencies(list.data.sessions) && (
              <p class="muted small table-note">These sessions are priced in more than one currency, whose costs do not compare: the costliest are those that used the most tokens (input and output).</p>
            )}
            <table class="table table-sessions">
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Relay key</th>
                  <th scope="col" class="num">Turns</th>
                  <th scope="col" class="col-optional">Models</th>
                  <th scope="col" class="num col-optional">Tokens in / out</th>
                  <th scope="col" class="num col-optional">Cache hits</th>
                  <th scope="col" class="num">Cost</th>
                  <th scope="col" class="num col-optional">Duration</th>
                  <th scope="col" class="col-optional">Last active</th>
                </tr>
              </thead>
              <tbody>{list.data.sessions.map((s) => <Row key={`${s.relay_key_id ?? ''} ${s.session_id}`} s={s} />)}</tbody>
            </table>
          </section>
        )}
    </>
  );
}
