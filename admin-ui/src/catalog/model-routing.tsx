// A model's routing at a glance (issue 42): its fallback chain with the conditions each takes,
// its retry policy with Relay's defaults where it sets none, and how its bindings are balanced.
import { api } from '../api/client.ts';
import type { Entity } from '../api/types.ts';
import { Link } from '../router.tsx';
import { useAsync } from '../ui/use-async.ts';
import { nameOf, useReferences } from './use-references.ts';

interface Fallback {
  modelId: string;
  on?: string[];
}

interface Retry {
  attemptsPerBinding?: number;
  maxAttempts?: number;
  backoff?: { initialMs?: number; maxMs?: number; multiplier?: number; jitter?: number };
  maxRetryAfterMs?: number;
  retryOn?: number[];
  deadlineMs?: number;
}

/** GET /api/models/{ref}/context-window: the window prompts are routed by, and where it comes from. */
interface ContextWindow {
  tokens: number | null;
  source: 'spec' | 'table' | null;
  upstreamModel?: string;
  tableModel?: string;
  sourcePage?: string;
}

function WindowText({ window }: { window: ContextWindow | undefined }) {
  if (!window || window.tokens === null) return <span class="muted">unknown: no routing by prompt size</span>;
  const tokens = `${window.tokens.toLocaleString('en-US')} tokens`;
  if (window.source === 'spec') return <>{tokens} <span class="muted small">(set on the model)</span></>;
  return (
    <>
      {tokens} <span class="muted small">(Relay's table: {window.upstreamModel} as {window.tableModel}, from <a href={window.sourcePage} target="_blank" rel="noreferrer">the vendor's page</a>)</span>
    </>
  );
}

const BALANCING: Record<string, string> = {
  weighted: 'weighted random (by binding weight)',
  'least-in-flight': 'fewest requests in flight',
  'lowest-latency': 'lowest recent time to first byte',
};

function orDefault(value: unknown, fallback: string): string {
  return value === undefined ? `${fallback} (default)` : String(value);
}

export function ModelRouting({ model }: { model: Entity }) {
  const refs = useReferences(['models']);
  const fallbacks = (model.spec.fallbacks as Fallback[] | undefined) ?? [];
  const retry = model.spec.retry as Retry | undefined;
  const backoff = retry?.backoff;
  const window = useAsync(() => api.get<ContextWindow>(`/api/models/${encodeURIComponent(model.metadata.id)}/context-window`), [model.metadata.id, JSON.stringify(model.spec.bindings), model.spec.contextWindow]);
  return (
    <section class="card" aria-label="Routing">
      <h2 class="card-title">Routing</h2>
      <h3 class="small muted">Fallback chain</h3>
      {fallbacks.length === 0
        ? <p class="muted small">None of its own: its key's policy's fallbacks apply, if any.</p>
        : (
          <ol class="fallback-chain">
            {fallbacks.map((f) => (
              <li key={f.modelId}>
                <Link href={`/catalog/models/${f.modelId}`}>{nameOf(refs.data, 'models', f.modelId)}</Link>
                <span class="muted small"> on {f.on ? f.on.join(', ') : 'every condition'}</span>
              </li>
            ))}
          </ol>
        )}
      <h3 class="small muted">Retry policy</h3>
      {retry === undefined && <p class="muted small">None of its own: its key's policy's applies, else one try per binding.</p>}
      <dl class="details" aria-label="Retry policy">
        <dt>Tries per binding</dt><dd>{orDefault(retry?.attemptsPerBinding, '1')}</dd>
        <dt>Tries in all</dt><dd>{orDefault(retry?.maxAttempts, 'one per binding and key')}</dd>
        <dt>Backoff</dt><dd>{backoff ? `${backoff.initialMs ?? 200} ms ×${backoff.multiplier ?? 2}, at most ${backoff.maxMs ?? 5000} ms, jitter ${backoff.jitter ?? 0.5}` : '200 ms ×2, at most 5000 ms, jitter 0.5 (default)'}</dd>
        <dt>Longest retry-after waited</dt><dd>{orDefault(retry?.maxRetryAfterMs === undefined ? undefined : `${retry.maxRetryAfterMs} ms`, 'never waits')}</dd>
        <dt>Statuses retried</dt><dd>{orDefault(retry?.retryOn?.join(', '), '408, 429, 5xx')}</dd>
        <dt>Deadline</dt><dd>{orDefault(retry?.deadlineMs === undefined ? undefined : `${retry.deadlineMs} ms`, 'none')}</dd>
      </dl>
      <h3 class="small muted">Bindings</h3>
      <dl class="details">
        <dt>Balancing</dt><dd>{BALANCING[String(model.spec.balancing ?? 'weighted')] ?? String(model.spec.balancing)}</dd>
        <dt>Hedge</dt><dd>{(model.spec.hedge as { afterMs?: number } | undefined)?.afterMs === undefined ? <span class="muted">off</span> : `after ${(model.spec.hedge as { afterMs: number }).afterMs} ms without an answer`}</dd>
        <dt>Context window</dt><dd><WindowText window={window.data} /></dd>
      </dl>
    </section>
  );
}
