// The filters of the request log: key, policy, model, status and time window, all in the URL.
import type { KindName } from '../api/types.ts';
import type { References } from '../catalog/use-references.ts';
import type { LogFilters } from './logs-api.ts';

export const WINDOWS = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
];

const STATUSES = [
  { value: '', label: 'Any status' },
  { value: '200', label: '200 OK' },
  { value: '>=400', label: 'Errors (≥ 400)' },
  { value: '4xx', label: '4xx client errors' },
  { value: '5xx', label: '5xx server errors' },
];

function toLocal(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function RefFilter({ id, label, kind, value, refs, onChange, getLabel }: {
  id: string; label: string; kind: KindName; value: string | undefined; refs: References | undefined;
  onChange: (v: string | undefined) => void; getLabel?: (spec: Record<string, unknown>, name: string) => string;
}) {
  const items = refs?.[kind] ?? [];
  return (
    <label class="filter" for={id}>
      <span class="filter-label">{label}</span>
      <select id={id} class="input" value={value ?? ''} onChange={(e) => onChange(e.currentTarget.value || undefined)}>
        <option value="">All</option>
        {items.map((e) => <option key={e.metadata.id} value={e.metadata.id}>{getLabel ? getLabel(e.spec, e.metadata.displayName) : e.metadata.displayName}</option>)}
        {value && !items.some((e) => e.metadata.id === value) && <option value={value}>{value.slice(0, 8)}</option>}
      </select>
    </label>
  );
}

export function FiltersBar({ filters, refs, onChange }: { filters: LogFilters; refs: References | undefined; onChange: (f: Partial<LogFilters>) => void }) {
  const custom = Boolean(filters.from || filters.to);
  const windowValue = custom ? 'custom' : filters.since ?? '';
  const active = Object.values(filters).some(Boolean);
  return (
    <div class="filters card" role="search" aria-label="Filter requests">
      <RefFilter id="filter-key" label="Relay key" kind="relay-keys" value={filters.relayKeyId} refs={refs}
        getLabel={(spec, name) => `${name}${spec.prefix ? ` (${String(spec.prefix)})` : ''}`} onChange={(v) => onChange({ relayKeyId: v })} />
      <RefFilter id="filter-policy" label="Policy" kind="policies" value={filters.policyId} refs={refs} onChange={(v) => onChange({ policyId: v })} />
      <RefFilter id="filter-model" label="Model" kind="models" value={filters.modelId} refs={refs} onChange={(v) => onChange({ modelId: v })} />
      <label class="filter" for="filter-status">
        <span class="filter-label">Status</span>
        <select id="filter-status" class="input" value={filters.status ?? ''} onChange={(e) => onChange({ status: e.currentTarget.value || undefined })}>
          {STATUSES.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
        </select>
      </label>
      <label class="filter" for="filter-window">
        <span class="filter-label">Time window</span>
        <select id="filter-window" class="input" value={windowValue} onChange={(e) => {
          const v = e.currentTarget.value;
          if (v === 'custom') onChange({ since: undefined, from: new Date(Date.now() - 86_400_000).toISOString(), to: undefined });
          else onChange({ since: v || undefined, from: undefined, to: undefined });
        }}>
          <option value="">Any time</option>
          {WINDOWS.map((w) => <option key={w.value} value={w.value}>{w.label}</option>)}
          <option value="custom">Custom range…</option>
        </select>
      </label>
      {custom && (
        <>
          <label class="filter" for="filter-from">
            <span class="filter-label">From</span>
            <input id="filter-from" class="input" type="datetime-local" value={toLocal(filters.from)} onChange={(e) => onChange({ from: e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : undefined })} />
          </label>
          <label class="filter" for="filter-to">
            <span class="filter-label">To</span>
            <input id="filter-to" class="input" type="datetime-local" value={toLocal(filters.to)} onChange={(e) => onChange({ to: e.currentTarget.value ? new Date(e.currentTarget.value).toISOString() : undefined })} />
          </label>
        </>
      )}
      {active && (
        <div class="filter filter-reset">
          <button type="button" class="btn btn-small" onClick={() => onChange({ relayKeyId: undefined, policyId: undefined, modelId: undefined, status: undefined, since: undefined, from: undefined, to: undefined })}>Reset filters</button>
        </div>
      )}
    </div>
  );
}
