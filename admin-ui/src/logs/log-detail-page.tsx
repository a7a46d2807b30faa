// One request: what it was, where it went, what it cost, and its captured bodies.
import { Fragment, type ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import type { KindName, LogDetail } from '../api/types.ts';
import { Link } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { ErrorBanner, Spinner } from '../ui/states.tsx';
import { Badge, StatusBadge } from '../ui/badge.tsx';
import { CopyButton } from '../ui/copy-button.tsx';
import { useAsync } from '../ui/use-async.ts';
import { nameOf, useReferences, type References } from '../catalog/use-references.ts';
import { formatDateTime, formatInt, formatMs } from '../format.ts';
import { getLog } from './logs-api.ts';
import { BodyView } from './body-view.tsx';
import { costText, isUnpriced, UNPRICED_HINT } from './cost-text.ts';
import { AttemptsCard } from './attempts-card.tsx';

const REF_KINDS: KindName[] = ['relay-keys', 'policies', 'models', 'hosts', 'host-keys', 'providers'];
/** Bodies are written up to a second after the usage record: a request this recent is asked for again. */
const PAYLOAD_PENDING_MS = 5_000;
const PAYLOAD_RETRY_MS = 1_000;

export function LogDetailPage({ requestId }: { requestId: string }) {
  const log = useAsync(() => getLog(requestId), [requestId]);
  const refs = useReferences(REF_KINDS);
  const pending = log.data !== undefined && log.data.payload_withheld === undefined && log.data.request_body === undefined && log.data.response_body === undefined
    && Date.now() - Date.parse(log.data.finished_at) < PAYLOAD_PENDING_MS;
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setTimeout(log.reload, PAYLOAD_RETRY_MS);
    return () => clearTimeout(timer);
  }, [pending, log.data]);
  const back = <Link href="/logs">← Logs</Link>;
  // A failed reload (asking again for bodies still being written) keeps the record on screen.
  if (log.error && !log.data) {
    const notFound = log.error instanceof ApiError && log.error.status === 404;
    return (
      <>
        <PageHeader title={notFound ? 'Request not found' : 'Request'} back={back} />
        <ErrorBanner error={notFound ? new Error(`No request with id ${requestId} is in the usage log (yet). Records are written a few seconds after the response.`) : log.error} onRetry={log.reload} />
      </>
    );
  }
  if (!log.data) return <><PageHeader title="Request" back={back} /><Spinner /></>;
  return <Detail log={log.data} refs={refs.data} />;
}

function Ref({ refs, kind, id }: { refs: References | undefined; kind: KindName; id: string | null }) {
  if (!id) return <span class="muted">—</span>;
  return <Link href={`/catalog/${kind}/${id}`}>{nameOf(refs, kind, id)}</Link>;
}

function Stat({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="stat"><div class="stat-label">{label}</div><div class="stat-value">{children}</div></div>;
}

function Headers({ title, headers }: { title: string; headers: Record<string, string> | undefined }) {
  if (!headers || Object.keys(headers).length === 0) return null;
  return (
    <section class="card">
      <h2 class="card-title">{title}</h2>
      <dl class="details details-mono">
        {Object.entries(headers).map(([k, v]) => <Fragment key={k}><dt>{k}</dt><dd>{v}</dd></Fragment>)}
      </dl>
    </section>
  );
}

function Detail({ log, refs }: { log: LogDetail; refs: References | undefined }) {
  const hasPayload = log.request_body !== undefined || log.response_body !== undefined;
  const extras = Object.entries(log.extras ?? {});
  return (
    <>
      <PageHeader
        title={`${log.model_slug ?? log.model_requested ?? 'Request'}`}
        subtitle={<span class="mono">{log.request_id}</span>}
        back={<Link href="/logs">← Logs</Link>}
        actions={<CopyButton text={log.request_id} label="Copy request id" />}
      />
      <div class="stats card">
        <Stat label="Status"><StatusBadge status={log.status} />{log.error_code && <div class="mono small">{log.error_code}</div>}</Stat>
        <Stat label="Latency">{formatMs(log.latency_ms)}<div class="muted small">first byte {formatMs(log.ttfb_ms)}</div></Stat>
        <Stat label="Input tokens">{formatInt(log.input_tokens)}</Stat>
        <Stat label="Output tokens">{formatInt(log.output_tokens)}</Stat>
        <Stat label="Cost">{isUnpriced(log) ? <Badge tone="amber" title={UNPRICED_HINT}>{costText(log)}</Badge> : costText(log)}{log.extras.price_source && <div class="muted small mono">{log.extras.price_source}</div>}</Stat>
      </div>
      <div class="grid-2">
        <section class="card">
          <h2 class="card-title">Request</h2>
          <dl class="details">
            <dt>Started</dt><dd>{formatDateTime(log.started_at)}</dd>
            <dt>Finished</dt><dd>{formatDateTime(log.finished_at)}</dd>
            <dt>Relay key</dt><dd><Ref refs={refs} kind="relay-keys" id={log.relay_key_id} /> {log.relay_key_prefix && <code>{log.relay_key_prefix}</code>}</dd>
            <dt>Policy</dt><dd><Ref refs={refs} kind="policies" id={log.policy_id} /></dd>
            <dt>Model asked</dt><dd class="mono">{log.model_requested ?? '—'}</dd>
            <dt>Model</dt><dd><Ref refs={refs} kind="models" id={log.model_id} /></dd>
            <dt>Inbound shape</dt><dd class="mono">{log.inbound_shape}</dd>
            <dt>Stream</dt><dd>{log.stream ? 'yes' : 'no'}{log.client_aborted && <> · <Badge tone="amber">client aborted</Badge></>}</dd>
            <dt>Client</dt><dd>{log.client ?? <span class="muted">—</span>}</dd>
          </dl>
        </section>
        <section class="card">
          <h2 class="card-title">Upstream</h2>
          <dl class="details">
            <dt>Provider</dt><dd><Ref refs={refs} kind="providers" id={log.provider_id} /></dd>
            <dt>Host</dt><dd><Ref refs={refs} kind="hosts" id={log.host_id} /></dd>
            <dt>Host key</dt><dd><Ref refs={refs} kind="host-keys" id={log.host_key_id} /></dd>
            <dt>Upstream model</dt><dd class="mono">{log.upstream_model ?? '—'}</dd>
            <dt>Upstream shape</dt><dd class="mono">{log.upstream_shape ?? '—'}</dd>
            <dt>Attempts</dt><dd>{log.attempts}</dd>
            <dt>Cache read / write</dt><dd>{formatInt(log.cache_read_tokens)} / {formatInt(log.cache_write_tokens)}</dd>
            <dt>Reasoning tokens</dt><dd>{formatInt(log.reasoning_tokens)}</dd>
          </dl>
        </section>
      </div>
      <AttemptsCard log={log} />
      {extras.length > 0 && (
        <section class="card">
          <h2 class="card-title">Extras</h2>
          <dl class="details details-mono">
            {extras.map(([k, v]) => <Fragment key={k}><dt>{k}</dt><dd>{v}</dd></Fragment>)}
          </dl>
        </section>
      )}
      {log.payload_withheld ? (
        <section class="card">
          <h2 class="card-title">Bodies</h2>
          <p class="muted" data-testid="payload-withheld">Captured bodies are visible to admins.</p>
        </section>
      ) : hasPayload ? (
        <>
          <BodyView title="Request body" body={log.request_body} truncated={log.request_truncated} />
          <BodyView title="Response body" body={log.response_body} truncated={log.response_truncated} />
          <div class="grid-2">
            <Headers title="Request headers" headers={log.request_headers} />
            <Headers title="Response headers" headers={log.response_headers} />
          </div>
        </>
      ) : (
        <section class="card">
          <h2 class="card-title">Bodies</h2>
          <p class="muted">No payload was captured for this request. Bodies are kept only while payload logging is enabled in <Link href="/settings">Settings</Link> and the request's policy or relay key opts in.</p>
        </section>
      )}
    </>
  );
}
