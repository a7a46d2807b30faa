// Turns timeseries points into chart columns: a gap-free time axis over the window, one
// column per group (the busiest groups first, the rest summed as "other").
import type { UsageTimeseries, UsageTotals } from '../api/types.ts';
import { PALETTE, type ChartSeries } from './time-chart.tsx';

export const WINDOW_SECONDS: Record<string, number> = { '1h': 3600, '24h': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400 };
export const BUCKET_SECONDS: Record<string, number> = { '5m': 300, '1h': 3600, '1d': 86_400 };
export const DEFAULT_BUCKET: Record<string, string> = { '1h': '5m', '24h': '1h', '7d': '1h', '30d': '1d' };

export type Measure = (t: UsageTotals) => number;

export interface Columns {
  x: number[];
  groups: Array<{ key: string | null; byBucket: Map<number, UsageTotals>; total: number }>;
}

const MAX_GROUPS = 7;

export function toColumns(ts: UsageTimeseries, windowSeconds: number, now = Date.now() / 1000): Columns {
  const step = ts.bucketSeconds > 0 ? ts.bucketSeconds : 3600;
  const times = ts.points.map((p) => Math.floor(new Date(p.t).getTime() / 1000));
  const anchor = times.length > 0 ? Math.min(...times) : Math.floor(now / step) * step;
  const start = now - windowSeconds;
  const first = anchor - Math.floor((anchor - start) / step) * step;
  const x: number[] = [];
  for (let t = first; t <= now; t += step) x.push(t);
  for (const t of times) if (!x.includes(t)) x.push(t);
  x.sort((a, b) => a - b);

  const byKey = new Map<string, { key: string | null; byBucket: Map<number, UsageTotals>; total: number }>();
  ts.points.forEach((p, i) => {
    const id = p.key === undefined ? '__total' : String(p.key);
    let g = byKey.get(id);
    if (!g) { g = { key: p.key ?? null, byBucket: new Map(), total: 0 }; byKey.set(id, g); }
    g.byBucket.set(times[i], p.totals);
    g.total += p.totals.requests;
  });
  const groups = [...byKey.values()].sort((a, b) => b.total - a.total);
  if (groups.length > MAX_GROUPS + 1) {
    const rest = groups.splice(MAX_GROUPS);
    const other = { key: '__other', byBucket: new Map<number, UsageTotals>(), total: 0 };
    for (const g of rest) {
      other.total += g.total;
      for (const [t, totals] of g.byBucket) other.byBucket.set(t, add(other.byBucket.get(t), totals));
    }
    groups.push(other);
  }
  return { x, groups };
}

function add(a: UsageTotals | undefined, b: UsageTotals): UsageTotals {
  if (!a) return { ...b };
  const out = { ...a };
  for (const k of Object.keys(b) as Array<keyof UsageTotals>) out[k] = (a[k] ?? 0) + (b[k] ?? 0);
  return out;
}

export function seriesFor(cols: Columns, measure: Measure, label: (key: string | null) => string): ChartSeries[] {
  return cols.groups.map((g, i) => ({
    label: label(g.key),
    color: PALETTE[i % PALETTE.length],
    values: cols.x.map((t) => { const v = g.byBucket.get(t); return v ? measure(v) : 0; }),
  }));
}
