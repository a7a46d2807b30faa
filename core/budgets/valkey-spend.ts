// Budget spend shared by every instance through Valkey: one hash per budget, version of what it
// counts and window (micros, tokens), raised by atomic increments when a request ends, and raised
// to at least the usage log's figures when a budget is reconciled (so a flushed Valkey, or spend
// from before the budget existed, is not lost; never lowered, so spend is never counted below what
// happened).
//
// The key, relay:budget:<budget id>:<digest>:<window start ms>, carries a digest of what the budget
// counts (scope, window, time zone, currency: budget-guard.ts whatCounts): an edit of any of them
// starts a new total, raised to the usage log's figure for the new scope by the first read, and an
// instance still holding the old version (the catalog's propagation delay) keeps adding to the old
// total, not to the new one. An edit of anything else (name, limits, alerts) keeps the total.
//
// Rolling upgrade: instances from before the digest add to relay:budget:<budget id>:<window start ms>.
// A reconcile raises the new total to that one as well when the budget was not edited in the
// window (its metadata.updatedAt not after the window's start), so the spend the older instances
// counted is not lost; they learn the newer ones' spend from the usage log only.
import type { Redis } from 'ioredis';
import type { Spend } from './budget-guard.ts';
import { countsDigest } from './counts-digest.ts';

/** Raises micros and tokens to at least ARGV[1..2], and to KEYS[2]'s when given; returns both. */
const RAISE = `local m = tonumber(redis.call('HGET', KEYS[1], 'micros') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
if #KEYS > 1 then
  local lm = tonumber(redis.call('HGET', KEYS[2], 'micros') or '0')
  local lt = tonumber(redis.call('HGET', KEYS[2], 'tokens') or '0')
  if lm > m then m = lm; redis.call('HSET', KEYS[1], 'micros', m) end
  if lt > t then t = lt; redis.call('HSET', KEYS[1], 'tokens', t) end
end
if tonumber(ARGV[1]) > m then m = tonumber(ARGV[1]); redis.call('HSET', KEYS[1], 'micros', m) end
if tonumber(ARGV[2]) > t then t = tonumber(ARGV[2]); redis.call('HSET', KEYS[1], 'tokens', t) end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return {m, t}`;

/** Which shared total a version of a budget counts in: its id and a digest of what it counts (computed once per version). */
export function sharedTotalId(budgetId: string, counts: string): string {
  return `${budgetId}:${countsDigest(counts)}`;
}

/** The Valkey key of a shared total in a window. */
export function sharedSpendKey(prefix: string, totalId: string, startMs: number): string {
  return `${prefix}:${totalId}:${startMs}`;
}

export const SHARED_SPEND_PREFIX = 'relay:budget';

/**
 * `total` is a sharedTotalId. `legacy`, a budget id: raise also to what instances from before the
 * digest counted under it (only when that counted the same scope: not edited in the window).
 */
export interface SharedSpend {
  add(total: string, startMs: number, expiresAtMs: number | null, delta: Spend): Promise<Spend>;
  raise(total: string, startMs: number, expiresAtMs: number | null, atLeast: Spend, legacy?: string): Promise<Spend>;
  read(total: string, startMs: number): Promise<Spend>;
}

/** A day past the window's reset: readers near the boundary still find it. */
const GRACE_MS = 86_400_000;

export class ValkeySpend implements SharedSpend {
  constructor(private readonly redis: Redis, private readonly prefix = SHARED_SPEND_PREFIX) {}

  private key(total: string, startMs: number): string {
    return sharedSpendKey(this.prefix, total, startMs);
  }

  async add(total: string, startMs: number, expiresAtMs: number | null, delta: Spend): Promise<Spend> {
    const key = this.key(total, startMs);
    const multi = this.redis.multi().hincrby(key, 'micros', delta.micros).hincrby(key, 'tokens', delta.tokens);
    if (expiresAtMs !== null) multi.pexpireat(key, expiresAtMs + GRACE_MS);
    const res = await multi.exec();
    // Valkey's own reason (WRONGTYPE, ...) in the message: the warning says why, and a different reason warns at once.
    const refused = res?.find(([err]) => err)?.[0];
    if (!res || refused) throw new Error(`valkey: budget increment failed${refused ? `: ${refused.message}` : ''}`);
    return { micros: Number(res[0]![1]), tokens: Number(res[1]![1]) };
  }

  async raise(total: string, startMs: number, expiresAtMs: number | null, atLeast: Spend, legacy?: string): Promise<Spend> {
    const keys = legacy === undefined ? [this.key(total, startMs)] : [this.key(total, startMs), sharedSpendKey(this.prefix, legacy, startMs)];
    const [micros, tokens] = await this.redis.eval(RAISE, keys.length, ...keys, String(atLeast.micros), String(atLeast.tokens),
      String(expiresAtMs === null ? 0 : expiresAtMs + GRACE_MS)) as [number, number];
    return { micros: Number(micros), tokens: Number(tokens) };
  }

  async read(total: string, startMs: number): Promise<Spend> {
    const [micros, tokens] = await this.redis.hmget(this.key(total, startMs), 'micros', 'tokens');
    return { micros: Number(micros ?? 0), tokens: Number(tokens ?? 0) };
  }
}
