// The inference plane's Prometheus series. Labelled children are looked up once per label set
// and kept: prom-client hashes the labels object on every inc()/observe() otherwise (~1 us each).
import { Counter, Histogram, type Registry } from 'prom-client';

type CounterChild = ReturnType<Counter['labels']>;
type HistogramChild = ReturnType<Histogram['labels']>;

export class InferenceMetrics {
  private readonly requests: Counter;
  private readonly duration: Histogram;
  private readonly requestChildren = new Map<string, CounterChild>();
  private readonly durationChildren = new Map<string, HistogramChild>();

  constructor(registry: Registry) {
    this.requests = new Counter({ name: 'relay_inference_requests_total', help: 'Inference requests by inbound shape and status', labelNames: ['shape', 'status'], registers: [registry] });
    this.duration = new Histogram({
      name: 'relay_inference_duration_seconds', help: 'Inference request duration (to the last byte)', labelNames: ['shape'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers: [registry],
    });
  }

  /** One finished request; `latencyMs` null for requests refused before the pipeline. */
  count(shape: string, status: number, latencyMs: number | null): void {
    const key = `${shape} ${status}`;
    let counter = this.requestChildren.get(key);
    if (!counter) {
      counter = this.requests.labels(shape, String(status));
      this.requestChildren.set(key, counter);
    }
    counter.inc();
    if (latencyMs === null) return;
    let histogram = this.durationChildren.get(shape);
    if (!histogram) {
      histogram = this.duration.labels(shape);
      this.durationChildren.set(shape, histogram);
    }
    histogram.observe(latencyMs / 1000);
  }
}
