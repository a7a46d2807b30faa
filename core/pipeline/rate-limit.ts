// Relay-side rate limits from `rate-limits` entities attached to a relay key's policy.
// Each limit applies per relay key: requests per minute and tokens per minute in fixed
// one-minute windows, and concurrent requests. Counters live in memory, or in Valkey/Redis
// when configured so that every instance shares them. A Valkey outage fails open and costs
// a request at most one short command deadline (valkey-guard.ts); a concurrency slot taken by a
// command the guard gave up on, or one whose give-back could not be sent, is given back off the request path.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { ValkeyGuard } from './valkey-guard.ts';
import { RelayError } from '../errors.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { RateLimit } from '../catalog/kinds.ts';
import type { Principal } from '../hooks.ts';

export interface Permit {
  /** Call once when the request finished, with the tokens it used. */
  release(tokens: number): void;
}

export interface RateLimiter {
  /** A permit, or null when the key's policy has no rate limit (the usual case: no promise, no await). */
  acquire(principal: Principal, snapshot: CatalogSnapshot): Promise<Permit> | null;
}

const NO_LIMIT: Permit = { release() {} };
const WINDOW_MS = 60_000;

interface Counters {
  /** Adds `n` to a windowed counter (its TTL starts with the window); returns the new value. */
  incr(key: string, n: number, ttlMs: number): Promise<number>;
  get(key: string): Promise<number>;
  /** Takes a concurrency slot and renews the counter's leak guard; returns the slots in use. */
  takeSlot(key: string, ttlMs: number): Promise<number>;
  /** Gives a slot back, never below zero (the guard may have expired while it was held). */
  giveSlot(key: string, ttlMs: number): Promise<void>;
}

class MemoryCounters implements Counters {
  private readonly values = new Map<string, { value: number; expires: number }>();

  async incr(key: string, n: number, ttlMs: number): Promise<number> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (!entry) {
      this.values.set(key, { value: n, expires: now + ttlMs });
      if (this.values.size > 10_000) this.sweep(now);
      return n;
    }
    entry.value += n;
    return entry.value;
  }

  async get(key: string): Promise<number> {
    return this.live(key, Date.now())?.value ?? 0;
  }

  async takeSlot(key: string, ttlMs: number): Promise<number> {
    const value = await this.incr(key, 1, ttlMs);
    this.values.get(key)!.expires = Date.now() + ttlMs;
    return value;
  }

  async giveSlot(key: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    const entry = this.live(key, now);
    if (!entry || entry.value <= 0) return;
    entry.value -= 1;
    entry.expires = now + ttlMs;
  }

  private live(key: string, now: number): { value: number; expires: number } | undefined {
    const entry = this.values.get(key);
    return entry && entry.expires > now ? entry : undefined;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.values) if (v.expires <= now) this.values.delete(k);
  }
}

// Decrements only a positive counter, renewing its TTL; a missing (expired) one stays missing.
const GIVE_SLOT = `local v = tonumber(redis.call('GET', KEYS[1]))
if v and v > 0 then
  redis.call('DECR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0`;

// A command ioredis refused to write (not connected, no offline queue): it was never sent.
const NOT_WRITTEN = /Stream isn't writeable/;
/** Slot give-backs waiting for a connection, at most (beyond that the counter's TTL is the backstop). */
const MAX_UNSENT_GIVES = 10_000;

class RedisCounters implements Counters {
  // Give-backs never sent because Valkey was not connected; sent on its next 'ready'.
  private unsent: Array<{ key: string; ttlMs: number; until: number }> = [];

  constructor(private readonly guard: ValkeyGuard, private readonly redis: Redis) {
    redis.on('ready', () => {
      const now = Date.now();
      const due = this.unsent;
      this.unsent = [];
      // Past its TTL the counter has expired: a give-back then could only free someone else's slot.
      for (const give of due) if (give.until > now) this.giveBack(give.key, give.ttlMs);
    });
  }

  async incr(key: string, n: number, ttlMs: number): Promise<number> {
    const res = await this.guard.run((redis) => redis.multi().incrby(key, n).pexpire(key, ttlMs, 'NX').exec());
    return Number(res?.[0]?.[1] ?? 0);
  }

  async get(key: string): Promise<number> {
    return Number((await this.guard.run((redis) => redis.get(key))) ?? 0);
  }

  async takeSlot(key: string, ttlMs: number): Promise<number> {
    let taking: Promise<[error: Error | null, result: unknown][] | null> | undefined;
    try {
      const res = await this.guard.run((redis) => (taking = redis.multi().incr(key).pexpire(key, ttlMs).exec()));
      return Number(res?.[0]?.[1] ?? 0);
    } catch (err) {
      // The guard gave up (the caller fails open, holding no slot) but a slow Valkey may apply the
      // INCR after all: a slot nobody would give back, so give it back as soon as it is known taken.
      taking?.then((res) => { if (res?.[0] && !res[0][0]) this.giveBack(key, ttlMs); }, () => undefined);
      throw err;
    }
  }

  async giveSlot(key: string, ttlMs: number): Promise<void> {
    let sent = false;
    try {
      await this.guard.run((redis) => { sent = true; return redis.eval(GIVE_SLOT, 1, key, String(ttlMs)); });
    } catch (err) {
      // Never sent (breaker open, not connected): safe to send later. One sent may have been applied: left to it or the TTL.
      if (!sent || NOT_WRITTEN.test((err as Error).message)) this.giveBack(key, ttlMs);
      throw err;
    }
  }

  /**
   * Gives a slot back off the request path: straight to the client (no short deadline, no
   * breaker: at most one per slot taken, and it lands whenever Valkey answers), or once the
   * client is connected again. Never sent twice, since a second DECR could free a held slot.
   */
  private giveBack(key: string, ttlMs: number): void {
    if (this.redis.status !== 'ready') return this.keepUnsent(key, ttlMs);
    this.redis.eval(GIVE_SLOT, 1, key, String(ttlMs)).catch((err: Error) => {
      if (NOT_WRITTEN.test(err.message)) this.keepUnsent(key, ttlMs);
    });
  }

  private keepUnsent(key: string, ttlMs: number): void {
    const now = Date.now();
    if (this.unsent.length >= MAX_UNSENT_GIVES) this.unsent = this.unsent.filter((give) => give.until > now);
    if (this.unsent.length < MAX_UNSENT_GIVES) this.unsent.push({ key, ttlMs, until: now + ttlMs });
  }
}

function limitsOf(principal: Principal, snapshot: CatalogSnapshot): RateLimit[] {
  const ids = principal.policy.spec.rateLimitIds;
  if (ids.length === 0) return [];
  const out: RateLimit[] = [];
  for (const id of ids) {
    const limit = snapshot.rateLimits.get(id);
    if (limit) out.push(limit);
  }
  return out;
}

function tooMany(what: string, retryAfterS: number): RelayError {
  const seconds = Math.max(1, Math.ceil(retryAfterS));
  return new RelayError('RELAY_ERR_RATE_LIMITED', `Rate limit reached for ${what}. Please try again in ${seconds}s.`, {
    headers: { 'retry-after': String(seconds) },
  });
}

export interface RateLimiterOptions {
  redis: Redis | null;
  log: Logger;
  concurrencySlotTtlMs?: number;
  metrics?: Registry;
  /** Deadline of one Valkey command (default 50 ms). */
  valkeyCommandTimeoutMs?: number;
  /** How long Valkey is skipped after consecutive failures (default 5 s). */
  valkeyBreakerOpenMs?: number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const slotTtlMs = options.concurrencySlotTtlMs ?? 10 * 60_000;
  const metrics = options.metrics ?? new Registry();
  const counters: Counters = options.redis
    ? new RedisCounters(new ValkeyGuard(options.redis, {
      commandTimeoutMs: options.valkeyCommandTimeoutMs ?? 50, openMs: options.valkeyBreakerOpenMs ?? 5_000,
    }, options.log, metrics, 'rate-limits'), options.redis)
    : new MemoryCounters();
  const failedOpen = (metrics.getSingleMetric('relay_rate_limit_fail_open_total') as Counter | undefined) ?? new Counter({
    name: 'relay_rate_limit_fail_open_total', help: 'Rate-limited requests allowed without counting because the counter store was unavailable', registers: [metrics],
  });
  const prefix = 'relay:rl:';

  async function acquireLimits(principal: Principal, snapshot: CatalogSnapshot): Promise<Permit> {
    const limits = limitsOf(principal, snapshot);
    if (limits.length === 0) return NO_LIMIT;
    const keyId = principal.relayKey.metadata.id;
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const secondsLeft = ((window + 1) * WINDOW_MS - now) / 1000;
    const held: Array<() => void> = [];
    const undo = () => { for (const fn of held) fn(); };
    try {
      for (const limit of limits) {
        const base = `${prefix}${keyId}:${limit.metadata.id}`;
        const spec = limit.spec;
        if (spec.tokensPerMinute !== undefined) {
          const used = await counters.get(`${base}:tpm:${window}`);
          if (used >= spec.tokensPerMinute) throw tooMany(`tokens per minute (${spec.tokensPerMinute})`, secondsLeft);
        }
        if (spec.requestsPerMinute !== undefined) {
          const count = await counters.incr(`${base}:rpm:${window}`, 1, WINDOW_MS + 1_000);
          if (count > spec.requestsPerMinute) throw tooMany(`requests per minute (${spec.requestsPerMinute})`, secondsLeft);
        }
        if (spec.concurrentRequests !== undefined) {
          const key = `${base}:conc`;
          // The TTL bounds a leak if an instance dies holding slots; every take and give renews
          // it, and a give after it ran out cannot take the count below zero.
          const inFlight = await counters.takeSlot(key, slotTtlMs);
          held.push(() => void counters.giveSlot(key, slotTtlMs).catch(() => undefined));
          if (inFlight > spec.concurrentRequests) throw tooMany(`concurrent requests (${spec.concurrentRequests})`, 1);
        }
      }
    } catch (err) {
      undo();
      if (err instanceof RelayError) throw err;
      // The counter store is down: serve rather than fail every request. The guard logs the
      // outage once and /metrics counts each request let through.
      failedOpen.inc();
      return NO_LIMIT;
    }
    let released = false;
    return {
      release(tokens: number) {
        if (released) return;
        released = true;
        undo();
        if (tokens > 0) {
          for (const limit of limits) {
            if (limit.spec.tokensPerMinute === undefined) continue;
            const key = `${prefix}${keyId}:${limit.metadata.id}:tpm:${Math.floor(Date.now() / WINDOW_MS)}`;
            counters.incr(key, tokens, WINDOW_MS + 1_000).catch(() => undefined);
          }
        }
      },
    };
  }

  return {
    acquire(principal, snapshot) {
      if (principal.policy.spec.rateLimitIds.length === 0) return null;
      return acquireLimits(principal, snapshot);
    },
  };
}
