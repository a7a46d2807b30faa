// Keeps a Valkey outage off the hot path: every command gets a short deadline, a client that
// is not connected fails at once (a client with an offline queue would queue the command through
// its reconnects, 1.4-3.3 s measured; Relay's have none, valkey-options.ts: ioredis refuses it
// while connecting too), and a circuit breaker skips Valkey altogether for a while after
// consecutive failures; after that pause a PING in the background (half-open) finds out whether
// it is back, so no request waits on a probe.
// The caller decides what a failure means (rate limits fail open).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';

const LOST = new Set(['reconnecting', 'close', 'end']);

export interface ValkeyGuardOptions {
  /** Deadline of one command. */
  commandTimeoutMs: number;
  /** How long Valkey is skipped once the breaker opens. */
  openMs: number;
  /** Consecutive failures that open the breaker. */
  failuresToOpen?: number;
}

/** Thrown instead of running a command while Valkey is skipped or unusable. */
export class ValkeyUnavailable extends Error {
  constructor(readonly reason: 'breaker-open' | 'not-connected' | 'timeout' | 'error', detail?: string) {
    super(detail ? `valkey ${reason}: ${detail}` : `valkey ${reason}`);
    this.name = 'ValkeyUnavailable';
  }
}

export class ValkeyGuard {
  private failures = 0;
  private openUntil = 0;
  private probing = false;
  private readonly errors: Counter<'use' | 'reason'>;
  private readonly openGauge: Gauge;

  constructor(private readonly redis: Redis, private readonly options: ValkeyGuardOptions, private readonly log: Logger, metrics: Registry, private readonly use: string) {
    this.errors = getOrCreate(metrics, 'relay_valkey_unavailable_total', () => new Counter({
      name: 'relay_valkey_unavailable_total', help: 'Valkey commands not run or failed, by use and reason (breaker-open, not-connected, timeout, error)',
      labelNames: ['use', 'reason'], registers: [metrics],
    }));
    this.openGauge = getOrCreate(metrics, 'relay_valkey_breaker_open', () => new Gauge({
      name: 'relay_valkey_breaker_open', help: '1 while Valkey is skipped after consecutive failures, by use', labelNames: ['use'], registers: [metrics],
    }));
    this.openGauge.set({ use }, 0);
  }

  /** Runs `command` within the deadline, or throws ValkeyUnavailable at once. */
  async run<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    if (this.openUntil > 0) {
      if (Date.now() >= this.openUntil && !this.probing) this.probe();
      return this.refuse('breaker-open');
    }
    // Lost and reconnecting: fail now. While connecting, ioredis refuses it or the deadline bounds the wait.
    if (LOST.has(this.redis.status)) return this.fail('not-connected');
    try {
      const result = await this.withinDeadline(command(this.redis));
      this.succeeded();
      return result;
    } catch (err) {
      if (err instanceof ValkeyUnavailable) return this.fail(err.reason, err);
      return this.fail('error', new ValkeyUnavailable('error', (err as Error).message));
    }
  }

  /** Half-open: one PING off the request path; an answer closes the breaker, anything else reopens it. */
  private probe(): void {
    this.probing = true;
    const probe = LOST.has(this.redis.status) ? Promise.reject(new Error('not connected')) : this.withinDeadline(this.redis.ping());
    probe.then(() => this.succeeded(), () => { this.openUntil = Date.now() + this.options.openMs; })
      .finally(() => { this.probing = false; });
  }

  private async withinDeadline<T>(command: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        command,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ValkeyUnavailable('timeout', `no answer within ${this.options.commandTimeoutMs} ms`)), this.options.commandTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private succeeded(): void {
    if (this.openUntil > 0) {
      this.log.info({ use: this.use }, 'valkey answers again; using it');
      this.openGauge.set({ use: this.use }, 0);
    }
    this.failures = 0;
    this.openUntil = 0;
  }

  private fail(reason: ValkeyUnavailable['reason'], err?: ValkeyUnavailable): never {
    this.failures += 1;
    if (this.failures >= (this.options.failuresToOpen ?? 3) || this.openUntil > 0) {
      if (this.openUntil === 0) {
        this.log.warn({ use: this.use, reason, openMs: this.options.openMs }, 'valkey unavailable; skipping it for a while (failing open)');
        this.openGauge.set({ use: this.use }, 1);
      }
      this.openUntil = Date.now() + this.options.openMs;
    }
    return this.refuse(reason, err);
  }

  private refuse(reason: ValkeyUnavailable['reason'], err?: ValkeyUnavailable): never {
    this.errors.inc({ use: this.use, reason });
    throw err ?? new ValkeyUnavailable(reason);
  }
}

function getOrCreate<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}
