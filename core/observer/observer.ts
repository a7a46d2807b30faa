// The detached observer: the pipeline hands it every finished request; it enqueues the usage
// event for the selected usage backend, the captured payload for the selected payload backend,
// and calls in-house recorders, all off the response path.
//
// Each loaded backend has its own queue. The backend is chosen per event from the settings at
// record time, so switching backends (PUT /api/settings/...) takes effect at once and loses
// nothing: events already queued for the old backend drain into it.
import type { Registry } from 'prom-client';
import type { CapturedPayload, Recorder, UsageEvent } from '../hooks.ts';
import type { Settings } from '../settings/types.ts';
import { createBatchQueue, type BatchQueue, type BatchQueueLog, type BatchQueueStats, type BatchWriteOptions, type BatchWriteResult, type RetryOptions } from './batch-queue.ts';
import { createObserverMetrics, type BackendKind } from './metrics.ts';
import type { PayloadBackend, UsageBackend } from './types.ts';

/** Longest a usage event waits in its queue before it is written. */
export const USAGE_MAX_DELAY_MS = 100;

export interface ObserverLog extends BatchQueueLog {
  info(obj: object, msg: string): void;
}

/** Batching for every backend queue; see BatchQueueOptions for the defaults. */
export interface QueueTuning {
  maxBatchSize?: number;
  maxDelayMs?: number;
  maxQueued?: number;
  retry?: RetryOptions;
  /** Most one write attempt waits for its backend (default 30 000 ms); past it the attempt is retried. */
  writeTimeoutMs?: number;
}

export interface ObserverOptions {
  settings: Settings;
  log: ObserverLog;
  metrics: Registry;
  queue?: QueueTuning;
  /** How long close() may take to flush, in total. Default 10 000 ms. */
  closeDeadlineMs?: number;
}

export interface ObserverStats {
  usage: Record<string, BatchQueueStats>;
  payload: Record<string, BatchQueueStats>;
  /** Events whose selected backend was not loaded. */
  unroutable: number;
}

export interface Observer {
  addUsageBackend(backend: UsageBackend): void;
  addPayloadBackend(backend: PayloadBackend): void;
  /** An in-house observer of every finished request; its exceptions are counted, never propagated. */
  addRecorder(name: string, fn: Recorder): void;
  /**
   * Enqueues one finished request. Synchronous, never throws, never waits for a backend. The event
   * and payload are the observer's from then on (queued until a batch is written): the caller must
   * not change them.
   */
  record(event: UsageEvent, payload: CapturedPayload | null): void;
  /** The spec's payload gate: global switch on, and the policy or the relay key opted in. */
  shouldCapture(policyPayloadLogging: boolean, keyPayloadLogging: boolean): boolean;
  payloadMaxBytes(): number;
  /** The selected usage backend (for reads), or null when it is not loaded. */
  usageBackend(): UsageBackend | null;
  payloadBackend(): PayloadBackend | null;
  /** Every loaded backend, for reads that cover data written before a switch. */
  loadedUsageBackends(): UsageBackend[];
  loadedPayloadBackends(): PayloadBackend[];
  /** Ids of the loaded backends. */
  backends(): { usage: string[]; payload: string[] };
  stats(): ObserverStats;
  /** Writes everything queued now (tests, admin actions). */
  flush(): Promise<void>;
  /** Resolves once the usage events recorded so far have left the selected usage backend's queue (written, or dropped and counted). */
  usageWritten(): Promise<void>;
  /** Flushes every queue within the deadline, then closes the backends. */
  close(): Promise<void>;
}

interface Lane<B> {
  backend: B;
  queue: BatchQueue<unknown>;
  /** Events handed to this lane; a plain count read when /metrics is scraped, cheaper than a labelled counter per event. */
  recorded: number;
}

export function createObserver(options: ObserverOptions): Observer {
  const { settings, log } = options;
  const metrics = createObserverMetrics(options.metrics);
  const usageLanes = new Map<string, Lane<UsageBackend>>();
  const payloadLanes = new Map<string, Lane<PayloadBackend>>();
  const recorders: Array<{ name: string; fn: Recorder }> = [];
  let unroutable = 0;
  let lastUnroutableLog = 0;
  let closing = false;

  metrics.watchLanes(() => [
    ...[...usageLanes].map(([backend, lane]) => ({ kind: 'usage' as const, backend, queue: lane.queue, recorded: lane.recorded })),
    ...[...payloadLanes].map(([backend, lane]) => ({ kind: 'payload' as const, backend, queue: lane.queue, recorded: lane.recorded })),
  ]);

  /** True while a usage backend's batch is failing: payload writes then give way (its disk, its retries). */
  const usageFailing = (): boolean => {
    for (const lane of usageLanes.values()) if (lane.queue.stats().backingOff) return true;
    return false;
  };

  function makeQueue<T>(kind: BackendKind, id: string, write: (batch: T[], options: BatchWriteOptions) => Promise<void | BatchWriteResult>): BatchQueue<T> {
    return createBatchQueue<T>({
      name: `${kind}:${id}`,
      write,
      // Usage records are written within 100 ms, which bounds what a crash (kill -9) can lose.
      ...(kind === 'usage' ? { maxDelayMs: USAGE_MAX_DELAY_MS } : { yieldWhile: usageFailing }),
      ...options.queue,
      log,
      onDropped: (count, reason) => metrics.dropped(kind, id, count, reason),
      onWritten: (count, ms) => metrics.written(kind, id, count, ms / 1000),
      onRetry: () => metrics.retried(kind, id),
    });
  }

  function addLane<B extends { id: string; write(batch: never[], options?: BatchWriteOptions): Promise<void | BatchWriteResult> }>(kind: BackendKind, lanes: Map<string, Lane<B>>, backend: B): void {
    if (lanes.has(backend.id)) throw new Error(`a ${kind} backend with id ${JSON.stringify(backend.id)} is already registered`);
    const queue = makeQueue<never>(kind, backend.id, (batch, options) => backend.write(batch, options));
    lanes.set(backend.id, { backend, queue: queue as BatchQueue<unknown>, recorded: 0 });
  }

  function noteUnroutable(kind: BackendKind, id: string): void {
    unroutable += 1;
    metrics.dropped(kind, id, 1, 'backend_not_loaded');
    const now = Date.now();
    if (now - lastUnroutableLog > 10_000) {
      lastUnroutableLog = now;
      log.error({ kind, backend: id, unroutable }, `${kind} backend ${JSON.stringify(id)} is selected but not loaded; events are dropped`);
    }
  }

  function enqueue(kind: BackendKind, lanes: Map<string, Lane<unknown>>, id: string, item: unknown): void {
    const lane = lanes.get(id);
    if (!lane) return noteUnroutable(kind, id);
    lane.recorded++;
    lane.queue.push(item);
  }

  function runRecorders(event: UsageEvent, payload: CapturedPayload | null): void {
    for (const { name, fn } of recorders) {
      try {
        fn(event, payload);
      } catch (err) {
        metrics.recorderFailed(name);
        log.warn({ recorder: name, err }, `recorder ${name} threw`);
      }
    }
  }

  return {
    addUsageBackend: (backend) => addLane('usage', usageLanes, backend),
    addPayloadBackend: (backend) => addLane('payload', payloadLanes, backend),

    addRecorder(name, fn) {
      recorders.push({ name, fn });
    },

    record(event, payload) {
      try {
        enqueue('usage', usageLanes, settings.get('usage-logging').backend, event);
        if (payload) {
          const payloadSetting = settings.get('payload-logging');
          // Re-checked here: the switch may have been turned off while the request ran.
          if (payloadSetting.enabled) enqueue('payload', payloadLanes, payloadSetting.backend, payload);
        }
        // In-house recorders run after the current tick so a slow one cannot delay the caller.
        if (recorders.length > 0) setImmediate(runRecorders, event, payload);
      } catch (err) {
        log.error({ err }, 'observer.record failed');
      }
    },

    shouldCapture(policyPayloadLogging, keyPayloadLogging) {
      return settings.get('payload-logging').enabled && (policyPayloadLogging || keyPayloadLogging);
    },

    payloadMaxBytes: () => settings.get('payload-logging').maxBytes,
    usageBackend: () => usageLanes.get(settings.get('usage-logging').backend)?.backend ?? null,
    payloadBackend: () => payloadLanes.get(settings.get('payload-logging').backend)?.backend ?? null,
    loadedUsageBackends: () => [...usageLanes.values()].map((lane) => lane.backend),
    loadedPayloadBackends: () => [...payloadLanes.values()].map((lane) => lane.backend),
    backends: () => ({ usage: [...usageLanes.keys()], payload: [...payloadLanes.keys()] }),

    stats() {
      const of = (lanes: Map<string, Lane<unknown>>) => Object.fromEntries([...lanes].map(([id, lane]) => [id, lane.queue.stats()]));
      return { usage: of(usageLanes), payload: of(payloadLanes), unroutable };
    },

    async flush() {
      await Promise.all([...usageLanes.values(), ...payloadLanes.values()].map((lane) => lane.queue.flush()));
    },

    usageWritten: () => usageLanes.get(settings.get('usage-logging').backend)?.queue.settled() ?? Promise.resolve(),

    async close() {
      if (closing) return;
      closing = true;
      const lanes: Array<Lane<{ id: string; close?(): Promise<void> }>> = [...usageLanes.values(), ...payloadLanes.values()];
      await Promise.all(lanes.map((lane) => lane.queue.close(options.closeDeadlineMs ?? 10_000)));
      await Promise.all(lanes.map(async (lane) => {
        try {
          await lane.backend.close?.();
        } catch (err) {
          log.warn({ backend: lane.backend.id, err }, 'closing a log backend failed');
        }
      }));
    },
  };
}
