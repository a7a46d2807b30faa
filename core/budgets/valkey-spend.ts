// Budget spend shared by every instance through Valkey: one hash per budget and window
// (micros, tokens), raised by atomic increments when a request ends, and raised to at least the
// usage log's figures when a budget is reconciled (so a flushed Valkey, or spend from before the
// budget existed, is not lost; never lowered, so spend is never counted below what happened).
import type { Redis } from 'ioredis';
import type { Spend } from './budget-guard.ts';

/** Raises micros and tokens to at least ARGV[1..2]; returns both. */
const RAISE = `local m = tonumber(redis.call('HGET', KEYS[1], 'micros') or '0')
local t = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
if tonumber(ARGV[1]) > m then m = tonumber(ARGV[1]); redis.call('HSET', KEYS[1], 'micros', m) end
if tonumber(ARGV[2]) > t then t = tonumber(ARGV[2]); redis.call('HSET', KEYS[1], 'tokens', t) end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return {m, t}`;

export interface SharedSpend {
  add(budgetId: string, startMs: number, expiresAtMs: number | null, delta: Spend): Promise<Spend>;
  raise(budgetId: string, startMs: number, expiresAtMs: number | null, atLeast: Spend): Promise<Spend>;
  read(budgetId: string, startMs: number): Promise<Spend>;
}

/** A day past the window's reset: readers near the boundary still find it. */
const GRACE_MS = 86_400_000;

export class ValkeySpend implements SharedSpend {
  constructor(private readonly redis: Redis, private readonly prefix = 'relay:budget') {}

  private key(budgetId: string, startMs: number): string {
    return `${this.prefix}:${budgetId}:${startMs}`;
  }

  async add(budgetId: string, startMs: number, expiresAtMs: number | null, delta: Spend): Promise<Spend> {
    const key = this.key(budgetId, startMs);
    const multi = this.redis.multi().hincrby(key, 'micros', delta.micros).hincrby(key, 'tokens', delta.tokens);
    if (expiresAtMs !== null) multi.pexpireat(key, expiresAtMs + GRACE_MS);
    const res = await multi.exec();
    // Valkey's own reason (WRONGTYPE, ...) in the message: the warning says why, and a different reason warns at once.
    const refused = res?.find(([err]) => err)?.[0];
    if (!res || refused) throw new Error(`valkey: budget increment failed${refused ? `: ${refused.message}` : ''}`);
    return { micros: Number(res[0]![1]), tokens: Number(res[1]![1]) };
  }

  async raise(budgetId: string, startMs: number, expiresAtMs: number | null, atLeast: Spend): Promise<Spend> {
    const [micros, tokens] = await this.redis.eval(RAISE, 1, this.key(budgetId, startMs), String(atLeast.micros), String(atLeast.tokens),
      String(expiresAtMs === null ? 0 : expiresAtMs + GRACE_MS)) as [number, number];
    return { micros: Number(micros), tokens: Number(tokens) };
  }

  async read(budgetId: string, startMs: number): Promise<Spend> {
    const [micros, tokens] = await this.redis.hmget(this.key(budgetId, startMs), 'micros', 'tokens');
    return { micros: Number(micros ?? 0), tokens: Number(tokens ?? 0) };
  }
}
