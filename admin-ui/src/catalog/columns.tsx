// The kind-specific columns of each catalog list (the name column is common to all).
import type { ComponentChildren } from 'preact';
import type { Entity, HostKeyHealth, KindName } from '../api/types.ts';
import { Badge, EnabledBadge } from '../ui/badge.tsx';
import { formatCompact, formatDateTime, formatRelative } from '../format.ts';
import { HealthBadge } from './health-badge.tsx';
import { nameOf, type References } from './use-references.ts';
import { useRelayConfig } from '../config-context.ts';

export interface Column {
  label: string;
  /** Hidden on narrow screens. */
  optional?: boolean;
  cell: (e: Entity, ctx: CellContext) => ComponentChildren;
}

export interface CellContext {
  refs: References | undefined;
  health: Map<string, HostKeyHealth> | undefined;
  /** Relay keys: when each was last accepted; host keys: last sent upstream (null: never). */
  lastUsed: Map<string, string | null> | undefined;
}

const s = (e: Entity) => e.spec as Record<string, unknown>;

function lastUsedCell(e: Entity, { lastUsed }: CellContext) {
  if (!lastUsed) return <span class="muted">…</span>;
  const at = lastUsed.get(e.metadata.id);
  return at ? <span title={formatDateTime(at)}>{formatRelative(at)}</span> : <span class="muted">never</span>;
}

/** A provider's adapter, flagged when this instance has not loaded it (its requests would fail here). */
function AdapterCell({ adapter }: { adapter: string }) {
  const loaded = useRelayConfig()?.adapters;
  const missing = loaded !== undefined && !loaded.includes(adapter);
  return <>
    <code>{adapter}</code>
    {missing && <> <Badge tone="amber" title="No plugin loaded on this instance provides this adapter">not loaded here</Badge></>}
  </>;
}
const yes = (v: unknown) => (v === true ? <Badge tone="blue">on</Badge> : <span class="muted">off</span>);

export const COLUMNS: Record<KindName, Column[]> = {
  providers: [
    { label: 'Adapter', cell: (e) => <AdapterCell adapter={String(s(e).adapter ?? '')} /> },
    { label: 'Shapes', optional: true, cell: (e) => (Array.isArray(s(e).shapes) ? (s(e).shapes as string[]).join(', ') : <span class="muted">all</span>) },
  ],
  hosts: [
    { label: 'Provider', cell: (e, { refs }) => nameOf(refs, 'providers', s(e).providerId) },
    { label: 'Base URL', optional: true, cell: (e) => <code class="truncate">{String(s(e).baseUrl ?? '')}</code> },
    { label: 'State', cell: (e) => <EnabledBadge enabled={s(e).enabled} /> },
  ],
  models: [
    { label: 'Bindings', cell: (e, { refs }) => {
      const bindings = (s(e).bindings ?? []) as Array<{ hostId: string; upstreamModel: string; enabled: boolean }>;
      if (bindings.length === 0) return <span class="muted">none</span>;
      return <span class="chips">{bindings.map((b, i) => <span key={i} class={`chip${b.enabled ? '' : ' chip-off'}`}>{nameOf(refs, 'hosts', b.hostId)} → {b.upstreamModel}</span>)}</span>;
    } },
    { label: 'Context', optional: true, cell: (e) => formatCompact(s(e).contextWindow as number | undefined) },
    { label: 'Reasoning', optional: true, cell: (e) => yes(s(e).reasoning) },
  ],
  'host-keys': [
    { label: 'Host', cell: (e, { refs }) => nameOf(refs, 'hosts', s(e).hostId) },
    { label: 'Value', optional: true, cell: (e) => {
      const vf = s(e).valueFrom as { kind?: string; env?: string } | undefined;
      return vf?.kind === 'stored' ? <span>stored {s(e).hasValue ? '✓' : <Badge tone="red">missing</Badge>}</span> : <span>env <code>{vf?.env}</code></span>;
    } },
    { label: 'Health', cell: (e, { health }) => (s(e).enabled === false ? <Badge tone="gray">disabled</Badge> : <HealthBadge health={health?.get(e.metadata.id)} />) },
    { label: 'Last used', cell: lastUsedCell },
  ],
  'rate-limits': [
    { label: 'Requests/min', cell: (e) => formatCompact(s(e).requestsPerMinute as number | undefined) },
    { label: 'Tokens/min', cell: (e) => formatCompact(s(e).tokensPerMinute as number | undefined) },
    { label: 'Concurrent', optional: true, cell: (e) => formatCompact(s(e).concurrentRequests as number | undefined) },
  ],
  policies: [
    { label: 'Tier', cell: (e) => <Badge tone={s(e).tier === 'host' ? 'gray' : 'blue'}>{String(s(e).tier ?? 'relay')}</Badge> },
    { label: 'Models', cell: (e, { refs }) => {
      const ids = s(e).modelIds;
      if (ids === '*') return <span>all models</span>;
      const list = (ids ?? []) as string[];
      return list.length === 0 ? <span class="muted">none</span> : <span class="chips">{list.map((id) => <span key={id} class="chip">{nameOf(refs, 'models', id)}</span>)}</span>;
    } },
    { label: 'Payloads', optional: true, cell: (e) => yes(s(e).payloadLoggingEnabled) },
  ],
  pricings: [
    { label: 'Model', cell: (e, { refs }) => nameOf(refs, 'models', s(e).modelId) },
    { label: 'Host', optional: true, cell: (e, { refs }) => (s(e).hostId ? nameOf(refs, 'hosts', s(e).hostId) : <span class="muted">any</span>) },
    { label: 'In / out per 1M', cell: (e) => `${s(e).inputPerMillion ?? '—'} / ${s(e).outputPerMillion ?? '—'} ${String(s(e).currency ?? '')}` },
  ],
  budgets: [
    { label: 'Scope', cell: (e, { refs }) => {
      const scope = (s(e).scope ?? {}) as { relayKeyId?: string; policyId?: string; modelId?: string };
      if (scope.relayKeyId) return <>key {nameOf(refs, 'relay-keys', scope.relayKeyId)}</>;
      if (scope.policyId) return <>policy {nameOf(refs, 'policies', scope.policyId)}</>;
      if (scope.modelId) return <>model {nameOf(refs, 'models', scope.modelId)}</>;
      return <span>everything</span>;
    } },
    { label: 'Limit', cell: (e) => [s(e).limitAmount !== undefined ? `${String(s(e).limitAmount)} ${String(s(e).currency ?? '')}` : '', s(e).limitTokens !== undefined ? `${formatCompact(s(e).limitTokens as number)} tokens` : ''].filter(Boolean).join(' · ') },
    { label: 'Window', optional: true, cell: (e) => (typeof s(e).window === 'object' ? `${(s(e).window as { rollingDays: number }).rollingDays} days rolling` : String(s(e).window)) },
    { label: 'State', cell: (e) => <EnabledBadge enabled={s(e).enabled} /> },
  ],
  'relay-keys': [
    { label: 'Prefix', cell: (e) => <code>{String(s(e).prefix ?? '—')}</code> },
    { label: 'Policy', optional: true, cell: (e, { refs }) => nameOf(refs, 'policies', s(e).policyId) },
    { label: 'State', cell: (e) => {
      const exp = s(e).expiresAt as string | null | undefined;
      if (s(e).enabled === false) return <Badge tone="gray">disabled</Badge>;
      if (exp && new Date(exp).getTime() < Date.now()) return <Badge tone="red" title={formatDateTime(exp)}>expired</Badge>;
      return <Badge tone="green" title={exp ? `Expires ${formatDateTime(exp)}` : 'Never expires'}>active</Badge>;
    } },
    { label: 'Expires', optional: true, cell: (e) => {
      const exp = s(e).expiresAt as string | null | undefined;
      return exp ? <span title={exp}>{formatDateTime(exp)}</span> : <span class="muted">never</span>;
    } },
    { label: 'Last used', cell: lastUsedCell },
    { label: 'Payloads', optional: true, cell: (e) => yes(s(e).payloadLoggingEnabled) },
  ],
};
