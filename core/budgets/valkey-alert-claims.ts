// Claims a budget alert in Valkey (SET NX): of the instances sharing Valkey, one wins per budget,
// version of what it counts (counts-digest.ts), window and threshold, even when each has its own
// database. The key, relay:budget-alert:<budget>:<digest>:<window start>:<threshold>, outlives the
// window by a day.
//
// Rolling upgrade: instances from before the digest claim relay:budget-alert:<budget>:<window
// start>:<threshold>. A claim here also sets that key (when free), so they do not send an alert a
// newer instance sent; a claim they made (a value that is not this module's) counts as won for
// every version of the budget in its window, so a newer instance does not send theirs again.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const GRACE_MS = 86_400_000;
/** How this module's claims start their value; an older instance's value is its claim time. */
const VALUE_TAG = 'v2:';

/** KEYS: this version's claim, the pre-digest claim. ARGV: this claim's value, its time to live in ms ('0': none). */
const CLAIM = `local legacy = redis.call('GET', KEYS[2])
if legacy and string.sub(legacy, 1, 3) ~= '${VALUE_TAG}' then return 0 end
local won
if ARGV[2] == '0' then won = redis.call('SET', KEYS[1], ARGV[1], 'NX') else won = redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') end
if not won then return 0 end
if ARGV[2] == '0' then redis.call('SET', KEYS[2], ARGV[1], 'NX') else redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') end
return 1`;

/** Deletes each key still holding this claim's value (ARGV[1]). */
const RELEASE = `for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 0`;

export interface AlertClaim {
  budgetId: string;
  countsDigest: string;
  windowStartMs: number;
  threshold: number;
}

export class ValkeyAlertClaims {
  constructor(private readonly redis: Redis, private readonly prefix = 'relay:budget-alert') {}

  private keys(c: AlertClaim): [string, string] {
    return [`${this.prefix}:${c.budgetId}:${c.countsDigest}:${c.windowStartMs}:${c.threshold}`, `${this.prefix}:${c.budgetId}:${c.windowStartMs}:${c.threshold}`];
  }

  /** The claim's value when this call won the alert, else null; `windowEndMs` null keeps the claim forever (lifetime budgets). */
  async claim(c: AlertClaim, windowEndMs: number | null, now = Date.now()): Promise<string | null> {
    const value = `${VALUE_TAG}${c.countsDigest}:${randomUUID()}`;
    const ttlMs = windowEndMs === null ? 0 : Math.max(1, windowEndMs + GRACE_MS - now);
    const won = await this.redis.eval(CLAIM, 2, ...this.keys(c), value, String(ttlMs));
    return won === 1 ? value : null;
  }

  /** Gives a claim back (its alert could not be recorded), so a later request fires it. */
  async release(c: AlertClaim, value: string): Promise<void> {
    await this.redis.eval(RELEASE, 2, ...this.keys(c), value);
  }
}
