// Relay-side rate limits from `rate-limits` entities attached to a relay key's policy.
// Each limit applies per relay key: requests per minute and tokens per minute in fixed
// one-minute windows, and concurrent requests (a lease per request, rate-limit-counters.ts).
// Counters live in memory, or in Valkey/Redis when configured so that every instance shares
// them. A Valkey outage fails open and costs a request at most one short command deadline
// (valkey-guard.ts); a concurrency slot taken by a command the guard gave up on, or one whose
// give-back could not be sent, is given back off the request path.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { ValkeyGuard } from './valkey-guard.ts';
import { CONCURRENCY_SLOT_TTL_MS, MemoryCounters, type Counters, type SlotLease } from './rate-limit-counters.ts';
import { ValkeyCounters } from './rate-limit-valkey.ts';
import { HeldSlots } from './held-slots.ts';
import { RelayError, StartupError } from '../errors.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { RateLimit } from '../catalog/kinds.ts';
import type { Principal } from '../hooks.ts';

export interface Permit {
  /** Call once when the request finished, with the tokens it used. */
  release(tokens: number): void;
  /** Tokens learned after release (an estimate for an answer without usage): counted against tokens per minute too. */
  countTokens(tokens: number): void;
}

export interface RateLimiter {
  /** A permit, or null when the key's policy has no rate limit (the usual case: no promise, no await). */
  acquire(principal: Principal, snapshot: CatalogSnapshot): Promise<Permit> | null;
  /** Stops renewing the slots still held (at shutdown): they expire after their TTL. */
  close(): void;
}

const NO_LIMIT: Permit = { release() {}, countTokens() {} };
const WINDOW_MS = 60_000;

/** A request's lease on one limit's slots, with what a warning about it may name (never the key's secret). */
interface LimitLease extends SlotLease {
  relayKeyId: string;
  rateLimitId: string;
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
  /** How long a concurrency slot outlives its holder when not given back (renewed while held; default 10 min). */
  concurrencySlotTtlMs?: number;
  /** How long a slot is renewed at most (rateLimits.maxSlotHoldMs; default 1 hour, at least the slot TTL). */
  maxSlotHoldMs?: number;
  metrics?: Registry;
  /** Deadline of one Valkey command (default 50 ms). */
  valkeyCommandTimeoutMs?: number;
  /** How long Valkey is skipped after consecutive failures (default 5 s). */
  valkeyBreakerOpenMs?: number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const slotTtlMs = options.concurrencySlotTtlMs ?? CONCURRENCY_SLOT_TTL_MS;
  const maxSlotHoldMs = options.maxSlotHoldMs ?? 60 * 60_000;
  // Shorter than a lease, a hold would end before its first renewal and free slots of live requests.
  if (!(maxSlotHoldMs >= slotTtlMs)) throw new StartupError(`rateLimits.maxSlotHoldMs (${maxSlotHoldMs}) must be at least the concurrency-slot lease TTL (${slotTtlMs} ms)`);
  const metrics = options.metrics ?? new Registry();
  const counters: Counters = options.redis
    ? new ValkeyCounters(new ValkeyGuard(options.redis, {
      commandTimeoutMs: options.valkeyCommandTimeoutMs ?? 50, openMs: options.valkeyBreakerOpenMs ?? 5_000,
    }, options.log, metrics, 'rate-limits'), options.redis, slotTtlMs)
    : new MemoryCounters(slotTtlMs);
  const overheld = (metrics.getSingleMetric('relay_rate_limit_slots_overheld_total') as Counter | undefined) ?? new Counter({
    name: 'relay_rate_limit_slots_overheld_total', help: 'Concurrency slots no longer renewed because a request held them longer than rateLimits.maxSlotHoldMs (a permit never given back)', registers: [metrics],
  });
  const slots = new HeldSlots<LimitLease>(counters, {
    ttlMs: slotTtlMs,
    maxHoldMs: maxSlotHoldMs,
    onRenewError(err) {
      options.log.warn({ err: err.message }, 'concurrency-slot leases not renewed; the next round tries again');
    },
    onOverheld({ relayKeyId, rateLimitId }) {
      overheld.inc();
      options.log.warn({ relayKeyId, rateLimitId, maxSlotHoldMs }, `concurrency slot held longer than rateLimits.maxSlotHoldMs: no longer renewed, it frees itself within ${slotTtlMs} ms`);
    },
  });
  // Holders are unique across instances: this instance's random id and a sequence number.
  const instanceId = randomBytes(9).toString('base64url');
  let holders = 0;
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
    const held: LimitLease[] = [];
    const undo = () => { for (const lease of held) slots.give(lease); };
    let holder: string | undefined;
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
          // A new key, not the counter `:conc` of older releases: an older instance INCRing it during a
          // rolling upgrade must not meet a sorted set. The take counts that counter too, so the limit holds across both.
          const lease = {
            key: `${base}:leases`, olderCounterKey: `${base}:conc`, holder: holder ??= `${instanceId}:${(++holders).toString(36)}`,
            relayKeyId: keyId, rateLimitId: limit.metadata.id,
          };
          const inFlight = await slots.take(lease);
          held.push(lease);
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
    const countTokens = (tokens: number) => {
      if (!(tokens > 0)) return;
      for (const limit of limits) {
        if (limit.spec.tokensPerMinute === undefined) continue;
        const key = `${prefix}${keyId}:${limit.metadata.id}:tpm:${Math.floor(Date.now() / WINDOW_MS)}`;
        counters.incr(key, tokens, WINDOW_MS + 1_000).catch(() => undefined);
      }
    };
    let released = false;
    return {
      release(tokens: number) {
        if (released) return;
        released = true;
        undo();
        countTokens(tokens);
      },
      countTokens,
    };
  }

  return {
    acquire(principal, snapshot) {
      if (principal.policy.spec.rateLimitIds.length === 0) return null;
      return acquireLimits(principal, snapshot);
    },
    close: () => slots.close(),
  };
}
