// OTLP metrics from the /metrics registry: a MetricProducer reads prom-client's registry at each
// export (counters as monotonic sums, gauges, histograms with their buckets), so the same series
// reach an OpenTelemetry backend without a second set of instruments on the request path.
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, MeterProvider, PeriodicExportingMetricReader, type MetricData, type MetricProducer, type CollectionResult } from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import type { Resource } from '@opentelemetry/resources';
import type { Registry } from 'prom-client';

interface PromValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

interface PromMetric {
  name: string;
  help: string;
  type: string;
  values: PromValue[];
}

const hrNow = (): HrTime => {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
};

const attributesOf = (labels: Record<string, string | number>): Attributes => Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)]));

/** Series of one histogram: prom-client's cumulative `le` buckets as per-bucket counts. */
function histogramPoints(metric: PromMetric, start: HrTime, end: HrTime): MetricData {
  const series = new Map<string, { attributes: Attributes; bounds: Array<[number, number]>; sum: number; count: number }>();
  for (const v of metric.values) {
    const { le, ...rest } = v.labels;
    const key = JSON.stringify(rest);
    let s = series.get(key);
    if (!s) series.set(key, s = { attributes: attributesOf(rest), bounds: [], sum: 0, count: 0 });
    if (v.metricName?.endsWith('_bucket')) s.bounds.push([le === '+Inf' ? Infinity : Number(le), v.value]);
    else if (v.metricName?.endsWith('_sum')) s.sum = v.value;
    else if (v.metricName?.endsWith('_count')) s.count = v.value;
  }
  const dataPoints = [...series.values()].map((s) => {
    const sorted = s.bounds.sort((x, y) => x[0] - y[0]);
    const boundaries = sorted.filter(([le]) => Number.isFinite(le)).map(([le]) => le);
    const counts = sorted.map(([, c], i) => c - (i > 0 ? sorted[i - 1]![1] : 0));
    return { startTime: start, endTime: end, attributes: s.attributes, value: { buckets: { boundaries, counts }, sum: s.sum, count: s.count } };
  });
  return {
    descriptor: { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.HISTOGRAM, dataPoints,
  } as MetricData;
}

export function promRegistryProducer(registry: Registry): MetricProducer {
  const start = hrNow();
  return {
    async collect(): Promise<CollectionResult> {
      const end = hrNow();
      const metrics: MetricData[] = [];
      for (const metric of await registry.getMetricsAsJSON() as unknown as PromMetric[]) {
        const descriptor = { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
        const points = () => metric.values.map((v) => ({ startTime: start, endTime: end, attributes: attributesOf(v.labels), value: v.value }));
        if (metric.type === 'counter') {
          metrics.push({ descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, dataPoints: points(), isMonotonic: true } as MetricData);
        } else if (metric.type === 'gauge') {
          metrics.push({ descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints: points() } as MetricData);
        } else if (metric.type === 'histogram') {
          metrics.push(histogramPoints(metric, start, end));
        }
      }
      return { resourceMetrics: { resource: undefined as never, scopeMetrics: [{ scope: { name: 'relay/metrics' }, metrics }] }, errors: [] };
    },
  };
}

export interface MetricsExportOptions {
  registry: Registry;
  endpoint?: string;
  intervalMs: number;
  resource: Resource;
}

export function startMetricsExport(options: MetricsExportOptions): { shutdown(): Promise<void> } {
  const base = options.endpoint?.replace(/\/+$/, '');
  const exporter = new OTLPMetricExporter(base === undefined ? {} : { url: `${base}/v1/metrics` });
  const reader = new PeriodicExportingMetricReader({
    exporter, exportIntervalMillis: options.intervalMs, exportTimeoutMillis: Math.min(30_000, options.intervalMs), metricProducers: [promRegistryProducer(options.registry)],
  });
  const provider = new MeterProvider({ resource: options.resource, readers: [reader] });
  return { shutdown: () => provider.shutdown() };
}
