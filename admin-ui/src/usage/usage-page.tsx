// Usage over a chosen window: totals, charts of requests, tokens, errors and cost over time
// (overall, by model or by relay key), and a breakdown table.
import { useMemo } from 'preact/hooks';
import type { GroupBy, KindName, UsageSummary, UsageTotals } from '../api/types.ts';
import { Link, setQuery, useLocation } from '../router.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, ErrorBanner, Spinner } from '../ui/states.tsx';
import { useAsync } from '../ui/use-async.ts';
import { useReferences, type References } from '../catalog/use-references.ts';
import { formatCompact, formatCost } from '../format.ts';
import { UNPRICED, UNPRICED_HINT, windowCostText } from '../logs/cost-text.ts';
import { summary, timeseries } from './usage-api.ts';
import { BUCKET_SECONDS, DEFAULT_BUCKET, WINDOW_SECONDS, seriesFor, toColumns } from './series.ts';
import { TimeChart } from './time-chart.tsx';

/** A group's cost: in the window's currency, or in each of its own when the window is priced in several. */
function GroupCost({ totals, costs }: { totals: UsageTotals; costs: Array<{ currency: string; cost: number }> }) {
  const text = windowCostText(totals, costs);
  return text === UNPRICED ? <span class="muted" title={UNPRICED_HINT}>{UNPRICED}</span> : <>{text}</>;
}

const REF_KINDS: KindName[] = ['models', 'relay-keys'];
const fmtCount = (n: number) => formatCompact(n);

function groupLabel(refs: References | undefined, groupBy: GroupBy | undefined, key: string | null): string {
  if (key === '__other') return 'Other';
  if (groupBy === undefined) return 'All requests';
  if (key === null || key === '') return groupBy === 'model' ? '(no model)' : '(no key)';
  const kind: KindName = groupBy === 'model' ? 'models' : 'relay-keys';
  const found = refs?.[kind]?.find((e) => e.metadata.id === key || e.metadata.slug === key);
  if (!found) return key.length > 20 ? key.slice(0, 8) : key;
  return groupBy === 'relay_key' && found.spec.prefix ? `${found.metadata.displayName} (${String(found.spec.prefix)})` : found.metadata.displayName;
}

export function Segmented<T extends string>({ label, value, options, onChange }: { label: string; value: T; options: Array<{ value: T; label: string }>; onChange: (v: T) => void }) {
  return (
    <div class="segmented" role="radiogroup" aria-label={label}>
      {options.map((o) => (
        <button key={o.value} type="button" role="radio" aria-checked={o.value === value} class={o.value === value ? 'active' : ''} onClick={() => onChange(o.value)}>{o.label}</button>
      ))}
    </div>
  );
}

function Totals({ totals, costs }: { totals: UsageTotals; costs: UsageSummary['costs'] }) {
  const errorRate = totals.requests > 0 ? (totals.errors / totals.requests) * 100 : 0;
  const cards: Array<[string, string, string?]> = [
    ['Requests', formatCompact(totals.requests)],
    ['Errors', formatCompact(totals.errors), totals.requests > 0 ? `${errorRate.toFixed(1)}% of requests` : undefined],
    ['Input tokens', formatCompact(totals.input_tokens), totals.cache_read_tokens ? `${formatCompact(totals.cache_read_tokens)} from cache` : undefined],
    ['Output tokens', formatCompact(totals.output_tokens), totals.reasoning_tokens ? `${formatCompact(totals.reasoning_tokens)} reasoning` : undefined],
    ['Cost', windowCostText(totals, costs), costs.length > 1 ? `priced in ${costs.length} currencies` : windowCostText(totals, costs) === UNPRICED ? UNPRICED_HINT : undefined],
  ];
  return (
    <div class="totals">
      {cards.map(([label, value, note]) => (
        <div class="card total" key={label}>
          <div class="stat-label">{label}</div>
          <div class="total-value" data-testid={`total-${label.toLowerCase().replace(' ', '-')}`}>{value}</div>
          {note && <div class="muted small">{note}</div>}
        </div>
      ))}
    </div>
  );
}

export function UsagePage() {
  const { query } = useLocation();
  const since = WINDOW_SECONDS[query.get('since') ?? ''] ? query.get('since')! : '24h';
  const bucket = BUCKET_SECONDS[query.get('bucket') ?? ''] ? query.get('bucket')! : DEFAULT_BUCKET[since];
  const groupParam = query.get('groupBy');
  const groupBy: GroupBy | undefined = groupParam === 'model' || groupParam === 'relay_key' ? groupParam : undefined;

  const refs = useReferences(REF_KINDS);
  const sum = useAsync(() => summary(since, groupBy ?? 'model'), [since, groupBy]);
  // Priced in several currencies: the cost chart shows one at a time (amounts in two do not add).
  const currencies = (sum.data?.costs ?? []).map((c) => c.currency);
  const mixed = currencies.length > 1;
  const chosen = query.get('currency');
  const costCurrency = mixed ? (chosen !== null && currencies.includes(chosen) ? chosen : currencies[0]) : undefined;
  const ts = useAsync(() => timeseries(since, bucket, groupBy, costCurrency), [since, bucket, groupBy, costCurrency]);
  const chartCurrency = ts.data?.costCurrency ?? currencies[0] ?? 'USD';
  const fmtCost = (n: number) => formatCost(n, chartCurrency);

  const cols = useMemo(() => (ts.data ? toColumns(ts.data, WINDOW_SECONDS[since]) : undefined), [ts.data, since]);
  const label = (key: string | null) => groupLabel(refs.data, groupBy, key);
  const charts = useMemo(() => {
    if (!cols) return undefined;
    const tokens = groupBy
      ? seriesFor(cols, (t) => t.input_tokens + t.output_tokens, label)
      : [...seriesFor(cols, (t) => t.input_tokens, () => 'Input'), ...seriesFor(cols, (t) => t.output_tokens, () => 'Output').map((s) => ({ ...s, color: '#0891b2' }))];
    return {
      requests: seriesFor(cols, (t) => t.requests, groupBy ? label : () => 'Requests'),
      tokens,
      errors: seriesFor(cols, (t) => t.errors, groupBy ? label : () => 'Errors').map((s) => (groupBy ? s : { ...s, color: '#dc2626' })),
      cost: seriesFor(cols, (t) => t.cost, groupBy ? label : () => 'Cost').map((s) => (groupBy ? s : { ...s, color: '#16a34a' })),
    };
  }, [cols, refs.data, groupBy]);

  const groups = [...(sum.data?.groups ?? [])].sort((a, b) => b.totals.requests - a.totals.requests);
  const breakdownBy: GroupBy = groupBy ?? 'model';

  return (
    <>
      <PageHeader title="Usage" subtitle="Requests, tokens, errors and cost across every relay key."
        actions={<button type="button" class="btn" onClick={() => { sum.reload(); ts.reload(); }}>Refresh</button>} />
      <div class="toolbar toolbar-wrap">
        <Segmented label="Time window" value={since} onChange={(v) => setQuery({ since: v, bucket: undefined })}
          options={[{ value: '1h', label: '1 hour' }, { value: '24h', label: '24 hours' }, { value: '7d', label: '7 days' }, { value: '30d', label: '30 days' }]} />
        <Segmented label="Group by" value={groupBy ?? 'total'} onChange={(v) => setQuery({ groupBy: v === 'total' ? undefined : v })}
          options={[{ value: 'total', label: 'Total' }, { value: 'model', label: 'By model' }, { value: 'relay_key', label: 'By key' }]} />
        <label class="filter filter-inline" for="bucket">
          <span class="filter-label">Bucket</span>
          <select id="bucket" class="input" value={bucket} onChange={(e) => setQuery({ bucket: e.currentTarget.value })}>
            <option value="5m">5 minutes</option>
            <option value="1h">1 hour</option>
            <option value="1d">1 day</option>
          </select>
        </label>
        {mixed && costCurrency && (
          <Segmented label="Cost currency" value={costCurrency} onChange={(v) => setQuery({ currency: v })}
            options={currencies.map((c) => ({ value: c, label: `Cost in ${c}` }))} />
        )}
      </div>
      {sum.error ? <ErrorBanner error={sum.error} onRetry={sum.reload} /> : sum.data ? <Totals totals={sum.data.totals} costs={sum.data.costs} /> : <Spinner />}
      {ts.error ? <ErrorBanner error={ts.error} onRetry={ts.reload} />
        : !charts || !cols ? <Spinner label="Loading charts…" />
        : cols.groups.length === 0 ? (
          <EmptyState title="No traffic in this window">Requests made with a relay key appear here within seconds. Create one under <Link href="/catalog/relay-keys">Relay keys</Link>.</EmptyState>
        ) : (
          <div class="charts">
            <TimeChart title="Requests" integer step={ts.data!.bucketSeconds} x={cols.x} series={charts.requests} format={fmtCount} />
            <TimeChart title={groupBy ? 'Tokens (input + output)' : 'Tokens'} integer step={ts.data!.bucketSeconds} x={cols.x} series={charts.tokens} format={fmtCount} />
            <TimeChart title="Errors" integer step={ts.data!.bucketSeconds} x={cols.x} series={charts.errors} format={fmtCount} />
            <TimeChart title={mixed ? `Cost in ${chartCurrency}` : 'Cost'} step={ts.data!.bucketSeconds} x={cols.x} series={charts.cost} format={fmtCost} />
          </div>
        )}
      {groups.length > 0 && (
        <section class="card table-wrap">
          <h2 class="card-title card-title-pad">By {breakdownBy === 'model' ? 'model' : 'relay key'}</h2>
          <table class="table">
            <thead>
              <tr>
                <th scope="col">{breakdownBy === 'model' ? 'Model' : 'Relay key'}</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num">Errors</th>
                <th scope="col" class="num col-optional">Input</th>
                <th scope="col" class="num col-optional">Output</th>
                <th scope="col" class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={String(g.key)}>
                  <td>{groupLabel(refs.data, breakdownBy, g.key)}</td>
                  <td class="num">{formatCompact(g.totals.requests)}</td>
                  <td class="num">{formatCompact(g.totals.errors)}</td>
                  <td class="num col-optional">{formatCompact(g.totals.input_tokens)}</td>
                  <td class="num col-optional">{formatCompact(g.totals.output_tokens)}</td>
                  <td class="num"><GroupCost totals={g.totals} costs={g.costs ?? sum.data?.costs ?? []} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}
