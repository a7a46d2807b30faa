// Load balancing by what is measured (issue 42 item 4): requests in flight per binding (this
// instance's), and an exponentially weighted average of each binding's time to first byte (the
// upstream's response headers), shared across instances through Valkey when it is configured.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Route } from '../hooks.ts';
import { TtfbRing } from './ttfb-ring.ts';

/** Weight of the newest observation in the average. */
export const LATENCY_ALPHA = 0.3;
/** An average older than this is treated as unmeasured, so a binding once slow is tried again. */
export const LATENCY_STALE_MS = 30_000;
/** A binding's p95 time to first byte is used (by a hedge) once it has this many observations. */
export const P95_MIN_SAMPLES = 20;
const SYNC_MS = 1_000;
const HASH = 'relay:binding-latency';
const HASH_TTL_S = 3_600;

interface Measured {
  ewmaMs: number;
  at: number;
}

/** One binding (model, host, upstream model) as the meter knows it. */
export function bindingKey(route: Pick<Route, 'model' | 'host' | 'upstreamModel'>): string {
  return `${route.model.metadata.id}:${route.host.metadata.id}:${route.upstreamModel}`;
}

export class BindingMeter {
  private readonly inFlight = new Map<string, number>();
  private readonly latency = new Map<string, Measured>();
  /** Each binding's recent observations, this instance's only (a hedge's delay needs no sharing). */
  private readonly recent = new Map<string, TtfbRing>();
  /** Averages changed here since the last sync, to write to Valkey. */
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: { redis?: Redis | null; log?: Logger; syncMs?: number } = {}) {
    if (options.redis) {
      this.timer = setInterval(() => void this.sync(), options.syncMs ?? SYNC_MS);
      this.timer.unref();
    }
  }

  /** Counts a request in flight on `key`; the returned function ends it (once). */
  acquire(key: string): () => void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }

  inFlightOf(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }

  observe(key: string, ms: number, now = Date.now()): void {
    const previous = this.latency.get(key);
    const fresh = previous && now - previous.at < LATENCY_STALE_MS ? previous : undefined;
    const ewmaMs = fresh ? fresh.ewmaMs + LATENCY_ALPHA * (ms - fresh.ewmaMs) : ms;
    this.latency.set(key, { ewmaMs, at: now });
    if (this.options.redis) this.dirty.add(key);
    let ring = this.recent.get(key);
    if (!ring) this.recent.set(key, ring = new TtfbRing());
    ring.add(ms);
  }

  /** The 95th percentile of the binding's recent times to first byte, or null below P95_MIN_SAMPLES. */
  p95Of(key: string): number | null {
    const ring = this.recent.get(key);
    return ring && ring.size >= P95_MIN_SAMPLES ? ring.p95() : null;
  }

  /** The average time to first byte, or null when not measured recently. */
  latencyOf(key: string, now = Date.now()): number | null {
    const m = this.latency.get(key);
    return m && now - m.at < LATENCY_STALE_MS ? m.ewmaMs : null;
  }

  /** Writes this instance's new averages and takes the newer ones of other instances. */
  async sync(): Promise<void> {
    const redis = this.options.redis;
    if (!redis) return;
    try {
      if (this.dirty.size > 0) {
        const fields: string[] = [];
        for (const key of this.dirty) {
          const m = this.latency.get(key);
          if (m) fields.push(key, JSON.stringify(m));
        }
        this.dirty.clear();
        if (fields.length > 0) await redis.multi().hset(HASH, ...fields).expire(HASH, HASH_TTL_S).exec();
      }
      const shared = await redis.hgetall(HASH);
      for (const [key, value] of Object.entries(shared)) {
        const remote = parseMeasured(value);
        const local = this.latency.get(key);
        if (remote && (!local || remote.at > local.at)) this.latency.set(key, remote);
      }
    } catch (err) {
      // Without Valkey each instance balances on its own measurements.
      this.options.log?.warn({ err: (err as Error).message }, 'could not share binding latencies through valkey');
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

function parseMeasured(value: string): Measured | null {
  try {
    const m = JSON.parse(value) as Partial<Measured>;
    return typeof m.ewmaMs === 'number' && typeof m.at === 'number' && Number.isFinite(m.ewmaMs) ? { ewmaMs: m.ewmaMs, at: m.at } : null;
  } catch {
    return null;
  }
}
