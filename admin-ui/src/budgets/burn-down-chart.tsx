// A budget's burn-down as a uPlot chart: spend so far (cumulative), the projection from now to
// the window's end (dashed), and the limit (flat). Money when the budget has a money limit, else tokens.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { BudgetBurnDown } from '../api/types.ts';
import { formatCompact, formatCost } from '../format.ts';

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** The chart's aligned data: x in unix seconds; spent, projected and limit series (null where not drawn). */
export function burnDownData(b: BudgetBurnDown, now: number): { x: number[]; spent: Array<number | null>; projected: Array<number | null>; limit: Array<number | null>; money: boolean } {
  const money = b.status.limitAmount !== null;
  const value = (p: { amount: number; tokens: number }) => (money ? p.amount : p.tokens);
  const limitValue = money ? b.status.limitAmount! : b.status.limitTokens!;
  const start = Date.parse(b.from) / 1000;
  const end = Date.parse(b.to) / 1000;
  const nowS = Math.min(now / 1000, end);
  const rows = new Map<number, { spent?: number; projected?: number }>();
  const first = b.points.length > 0 && Date.parse(b.points[0]!.t) / 1000 <= start ? undefined : 0;
  rows.set(start, { spent: first ?? value(b.points[0]!) });
  // Each bucket's total counts from its end (or now, for the bucket under way).
  for (const p of b.points) rows.set(Math.min(Date.parse(p.t) / 1000 + b.bucketSeconds, nowS), { spent: value(p) });
  const spentNow = money ? b.status.spentAmount : b.status.spentTokens;
  rows.set(nowS, { ...rows.get(nowS), spent: Math.max(rows.get(nowS)?.spent ?? 0, spentNow), projected: spentNow });
  if (b.projection) rows.set(Date.parse(b.projection.at) / 1000, { ...rows.get(Date.parse(b.projection.at) / 1000), projected: money ? b.projection.amount : b.projection.tokens });
  rows.set(end, { ...rows.get(end) });
  const x = [...rows.keys()].sort((a, c) => a - c);
  return {
    x, money,
    spent: x.map((t) => rows.get(t)!.spent ?? null),
    projected: x.map((t) => rows.get(t)!.projected ?? null),
    limit: x.map(() => limitValue),
  };
}

export function BurnDownChart({ burnDown, height = 260 }: { burnDown: BudgetBurnDown; height?: number }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const data = burnDownData(burnDown, Date.now());
    const format = (v: number) => (data.money ? formatCost(v, burnDown.status.currency) : formatCompact(v));
    const axisColor = cssVar('--muted', '#64748b');
    const gridColor = cssVar('--grid', 'rgba(100,116,139,0.15)');
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height,
      legend: { show: true, live: true },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, data.limit[0] ?? 0) * 1.1 || 1] } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 } },
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, size: 64, values: (_u, ticks) => ticks.map(format) },
      ],
      series: [
        { label: 'Time', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString('en-GB', { month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit' })) },
        // A step: each point is the total at its bucket's end, nothing is known between them.
        { label: 'Spent', stroke: '#4f46e5', width: 2, fill: '#4f46e533', spanGaps: true, paths: uPlot.paths.stepped!({ align: 1 }), value: (_u, v) => (v == null ? '—' : format(v)) },
        { label: 'Projected', stroke: '#d97706', width: 2, dash: [6, 4], spanGaps: true, value: (_u, v) => (v == null ? '—' : format(v)) },
        { label: 'Limit', stroke: '#dc2626', width: 1, value: (_u, v) => (v == null ? '—' : format(v)) },
      ],
    };
    const plot = new uPlot(opts, [data.x, data.spent, data.projected, data.limit] as uPlot.AlignedData, el);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height }));
    observer.observe(el);
    return () => { observer.disconnect(); plot.destroy(); };
  }, [burnDown, height]);
  return (
    <figure class="chart card" aria-label="Burn-down">
      <figcaption class="card-title">Burn-down{burnDown.projection ? ', projected to the window\'s end' : ''}</figcaption>
      <div ref={host} class="chart-host" role="img" aria-label="Spend over the window, the projection and the limit" />
    </figure>
  );
}
