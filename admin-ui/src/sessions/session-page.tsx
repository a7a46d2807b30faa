// One agent session: its totals, and its requests (newest first), each opening its log entry.
// The session is one relay key's (?relayKeyId=, as the Sessions list links); a link without it
// reads every request with the id and, when several keys sent it, says so and links each key's.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { SessionSummary, UsageEvent } from '../api/types.ts';
import { errorMessage } from '../api/client.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { ErrorBanner, Spinner } from '../ui/states.tsx';
import { StatusBadge } from '../ui/badge.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { useAsync } from '../ui/use-async.ts';
import { formatCompact, formatDateTime, formatMs } from '../format.ts';
import { costText } from '../logs/cost-text.ts';
import { getSession } from './sessions-api.ts';
import { formatDuration, formatRatio, sessionCost } from './session-format.ts';
import { sessionHref } from './sessions-page.tsx';

function Stat({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="stat"><div class="stat-label">{label}</div><div class="stat-value">{children}</div></div>;
}

const keyName = (s: Pick<SessionSummary, 'relay_key_id' | 'relay_key_prefix'>) => s.relay_key_prefix ?? s.relay_key_id ?? 'no key';

/** Several keys sent this id (a link without relayKeyId): each is its own session. */
function KeysOfId({ sessions }: { sessions: SessionSummary[] }) {
  return (
    <div class="banner banner-warning" role="status" data-testid="session-keys">
      {sessions.length} relay keys sent this session id; each is its own session, and this page adds them up:{' '}
      {sessions.map((s, i) => (
        <span key={s.relay_key_id ?? ''}>{i > 0 && ', '}<Link href={sessionHref(s.session_id, s.relay_key_id)}><code>{keyName(s)}</code></Link> ({formatCompact(s.turns)} turns, {sessionCost(s)})</span>
      ))}
    </div>
  );
}

export function SessionPage({ sessionId }: { sessionId: string }) {
  const relayKeyId = useLocation().query.get('relayKeyId') || null;
  return <SessionView key={relayKeyId ?? ''} sessionId={sessionId} relayKeyId={relayKeyId} />;
}

function SessionView({ sessionId, relayKeyId }: { sessionId: string; relayKeyId: string | null }) {
  const first = useAsync(() => getSession(sessionId, relayKeyId), [sessionId, relayKeyId]);
  const [more, setMore] = useState<{ items: UsageEvent[]; cursor: string | null | undefined; error?: string; loading?: boolean }>({ items: [], cursor: undefined });
  if (first.error) return <><PageHeader title="Session" back={<Link href="/sessions">← Sessions</Link>} /><ErrorBanner error={first.error} onRetry={first.reload} /></>;
  if (!first.data) return <Spinner />;
  const { session } = first.data;
  const items = [...first.data.items, ...more.items];
  const cursor = more.cursor === undefined ? first.data.nextCursor : more.cursor;
  async function loadMore() {
    setMore((m) => ({ ...m, loading: true }));
    try {
      const page = await getSession(sessionId, relayKeyId, cursor ?? null);
      setMore((m) => ({ items: [...m.items, ...page.items], cursor: page.nextCursor }));
    } catch (err) {
      setMore((m) => ({ ...m, loading: false, error: errorMessage(err) }));
    }
  }
  const t = session.totals;
  return (
    <>
      <PageHeader title={`Session ${session.session_id}`} subtitle={session.client ?? undefined}
        back={<Link href="/sessions">← Sessions</Link>} actions={<CopyButton text={session.session_id} label="Copy session id" />} />
      {first.data.sessions.length > 1 && <KeysOfId sessions={first.data.sessions} />}
      <div class="stats card">
        <Stat label="Relay key"><span class="mono small" title={session.relay_key_id ?? undefined}>{session.relay_key_id === null && first.data.sessions.length > 1 ? 'several' : keyName(session)}</span></Stat>
        <Stat label="Cost">{sessionCost(first.data.costs ? { ...session, costs: first.data.costs } : session)}</Stat>
        <Stat label="Turns">{formatCompact(session.turns)}{t.errors > 0 && <div class="muted small">{t.errors} failed</div>}</Stat>
        <Stat label="Input tokens">{formatCompact(t.input_tokens)}<div class="muted small">cache hits {formatRatio(session.cache_hit_ratio)}</div></Stat>
        <Stat label="Output tokens">{formatCompact(t.output_tokens)}{t.reasoning_tokens > 0 && <div class="muted small">{formatCompact(t.reasoning_tokens)} reasoning</div>}</Stat>
        <Stat label="Duration">{formatDuration(session.duration_ms)}<div class="muted small">{formatDateTime(session.first_started_at)}</div></Stat>
        <Stat label="Models"><span class="mono small">{session.models.join(', ') || '—'}</span></Stat>
      </div>
      <section class="card table-wrap">
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Status</th>
              <th scope="col">Model</th>
              <th scope="col" class="num col-optional">Tokens in / out</th>
              <th scope="col" class="num">Cost</th>
              <th scope="col" class="num col-optional">Latency</th>
            </tr>
          </thead>
          <tbody>
            {items.map((e) => (
              <tr key={e.request_id} class="row-clickable" onClick={(ev) => { if (!(ev.target as HTMLElement).closest('a')) navigate(`/logs/${encodeURIComponent(e.request_id)}`); }}>
                <td><Link class="row-link" href={`/logs/${encodeURIComponent(e.request_id)}`}>{formatDateTime(e.started_at)}</Link></td>
                <td><StatusBadge status={e.status} /></td>
                <td class="mono">{e.model_slug ?? e.model_requested ?? '—'}</td>
                <td class="num col-optional">{formatCompact(e.input_tokens)} / {formatCompact(e.output_tokens)}</td>
                <td class="num">{costText(e)}</td>
                <td class="num col-optional">{formatMs(e.latency_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {more.error && <ErrorBanner error={new Error(more.error)} onRetry={() => void loadMore()} />}
      {cursor && !more.error && (
        <div class="pager"><button type="button" class="btn" disabled={more.loading} onClick={() => void loadMore()}>{more.loading ? 'Loading…' : 'Load older requests'}</button></div>
      )}
    </>
  );
}
