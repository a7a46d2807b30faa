// The observer's figures in the prom-client registry (/metrics): what was recorded, written and
// lost per backend, queue depth and write latency.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { BatchQueue, DropReason } from './batch-queue.ts';

export type BackendKind = 'usage' | 'payload';

/** A backend's lane as /metrics reads it. */
export interface WatchedLane {
  kind: BackendKind;
  backend: string;
  queue: BatchQueue<unknown>;
  /** Events handed to the lane so far. */
  recorded: number;
}

export interface ObserverMetrics {
  written(kind: BackendKind, backend: string, count: number, seconds: number): void;
  dropped(kind: BackendKind, backend: string, count: number, reason: DropReason | 'backend_not_loaded'): void;
  retried(kind: BackendKind, backend: string): void;
  recorderFailed(recorder: string): void;
  /** Events recorded and queue depth are read from the lanes when /metrics is scraped. */
  watchLanes(list: () => WatchedLane[]): void;
}

function getOrCreate<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export function createObserverMetrics(registry: Registry): ObserverMetrics {
  const labelNames = ['kind', 'backend'] as const;
  let lanes: () => WatchedLane[] = () => [];
  getOrCreate(registry, 'relay_log_events_recorded_total', () => new Counter({
    name: 'relay_log_events_recorded_total', help: 'Events handed to a log backend queue', labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const { kind, backend, recorded } of lanes()) this.inc({ kind, backend }, recorded);
    },
  }));
  const written = getOrCreate(registry, 'relay_log_events_written_total', () => new Counter({
    name: 'relay_log_events_written_total', help: 'Events written by a log backend', labelNames, registers: [registry],
  }));
  const dropped = getOrCreate(registry, 'relay_log_events_dropped_total', () => new Counter({
    name: 'relay_log_events_dropped_total', help: 'Events lost: queue full, retries exhausted, rejected by the backend, shutdown deadline, backend not loaded',
    labelNames: [...labelNames, 'reason'], registers: [registry],
  }));
  const retries = getOrCreate(registry, 'relay_log_write_retries_total', () => new Counter({
    name: 'relay_log_write_retries_total', help: 'Failed batch writes that were retried', labelNames, registers: [registry],
  }));
  const latency = getOrCreate(registry, 'relay_log_write_duration_seconds', () => new Histogram({
    name: 'relay_log_write_duration_seconds', help: 'Duration of one successful batch write', labelNames,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [registry],
  }));
  const recorderFailures = getOrCreate(registry, 'relay_log_recorder_failures_total', () => new Counter({
    name: 'relay_log_recorder_failures_total', help: 'Exceptions thrown by in-house recorders', labelNames: ['recorder'], registers: [registry],
  }));
  getOrCreate(registry, 'relay_log_queue_depth', () => new Gauge({
    name: 'relay_log_queue_depth', help: 'Events held in a log backend queue', labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const { kind, backend, queue } of lanes()) this.set({ kind, backend }, queue.stats().queued);
    },
  }));

  return {
    written(kind, backend, count, seconds) {
      written.inc({ kind, backend }, count);
      latency.observe({ kind, backend }, seconds);
    },
    dropped: (kind, backend, count, reason) => dropped.inc({ kind, backend, reason }, count),
    retried: (kind, backend) => retries.inc({ kind, backend }),
    recorderFailed: (recorder) => recorderFailures.inc({ recorder }),
    watchLanes(list) {
      lanes = list;
    },
  };
}
