// A uPlot time chart of one measure, one line per group, sized to its container.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { fitLabels } from './axis-size.ts';

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
}

export const PALETTE = ['#4f46e5', '#0891b2', '#16a34a', '#d97706', '#dc2626', '#9333ea', '#db2777', '#64748b'];

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export function TimeChart({ title, x, series, format, step, integer = false, height = 220 }: {
  title: string;
  /** Bucket width in seconds (pads the x axis so edge bars are whole). */
  step: number;
  /** Counts: y ticks only at whole numbers. */
  integer?: boolean;
  /** Bucket starts, unix seconds. */
  x: number[];
  series: ChartSeries[];
  format: (n: number) => string;
  height?: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const axisColor = cssVar('--muted', '#64748b');
    const gridColor = cssVar('--grid', 'rgba(100,116,139,0.15)');
    const bars = x.length <= 60 && series.length === 1;
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height,
      cursor: { points: { size: 6 } },
      legend: { show: true, live: true },
      scales: { x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor } },
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { show: false }, size: fitLabels, values: (_u, ticks) => ticks.map(format),
          ...(integer ? { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9] } : {}) },
      ],
      series: [
        { label: 'Time', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString('en-GB', { month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit' })) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          fill: series.length === 1 ? `${s.color}33` : undefined,
          paths: bars ? uPlot.paths.bars!({ size: [0.7, 40] }) : undefined,
          points: { show: x.length < 50 && !bars },
          value: (_u: uPlot, v: number | null) => (v == null ? '—' : format(v)),
        })),
      ],
    };
    // Empty buckets draw no bar (a zero-height bar would draw a stray line).
    const data = [x, ...series.map((s) => (bars ? s.values.map((v) => (v === 0 ? null : v)) : s.values))] as uPlot.AlignedData;
    const plot = new uPlot(opts, data, el);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height }));
    observer.observe(el);
    return () => { observer.disconnect(); plot.destroy(); };
  }, [x, series, format, height, step, integer]);
  return (
    <figure class="chart card" aria-label={title}>
      <figcaption class="card-title">{title}</figcaption>
      <div ref={host} class="chart-host" role="img" aria-label={`${title} over time`} />
    </figure>
  );
}
