// Rate-limit counters shared by every instance through Valkey. A limit's concurrency slots are a
// sorted set of holders scored by their lease's expiry, on Valkey's clock (TIME in the scripts), so
// instances whose clocks disagree still agree on what expired. Commands on the request path go
// through the guard (short deadline, breaker); give-backs it could not send go off the request path.
import type { Redis } from 'ioredis';
import type { ValkeyGuard } from './valkey-guard.ts';
import type { Counters, SlotLease } from './rate-limit-counters.ts';

// KEYS[1]: a limit's leases, KEYS[2] (optional): older releases' counter of the same slots; ARGV:
// holder, TTL ms. Drops expired leases, leases the slot, keeps an idle set from outliving its last
// lease, and answers the leases live plus the slots older instances hold (rolling upgrade: the
// limit holds across both; once they are gone their counter expires and this costs one GET).
// The two keys carry no hash tag (the older one's name is fixed): not for a Valkey cluster.
const TAKE_SLOT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local live = redis.call('ZCARD', KEYS[1])
local older = KEYS[2] and tonumber(redis.call('GET', KEYS[2]))
if older and older > 0 then live = live + older end
return live`;

// KEYS[1]: a limit's leases; ARGV: TTL ms, then holders. XX: a lease given back is not recreated.
const RENEW_SLOTS = `local t = redis.call('TIME')
local expires = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', expires, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 0`;

/** The scripts as commands on the client (EVALSHA, EVAL the first time on a connection). */
interface LeaseScripts {
  relayTakeSlot(numberOfKeys: 1 | 2, ...keysThenArgs: Array<string | number>): Promise<number>;
}
interface LeaseRenewals {
  relayRenewSlots(key: string, ttlMs: number, ...holders: string[]): unknown;
}

/** Slot give-backs waiting for a connection, at most (beyond that the leases' expiry is the backstop). */
const MAX_UNSENT_GIVES = 10_000;

export class ValkeyCounters implements Counters {
  // Give-backs not known sent because Valkey was not connected or did not answer; sent on its next 'ready'.
  private unsent: Array<{ lease: SlotLease; until: number }> = [];
  private readonly scripts: Redis & LeaseScripts;

  constructor(private readonly guard: ValkeyGuard, private readonly redis: Redis, private readonly slotTtlMs: number) {
    redis.defineCommand('relayTakeSlot', { lua: TAKE_SLOT });
    redis.defineCommand('relayRenewSlots', { numberOfKeys: 1, lua: RENEW_SLOTS });
    this.scripts = redis as Redis & LeaseScripts;
    redis.on('ready', () => {
      const now = Date.now();
      const due = this.unsent;
      this.unsent = [];
      // A lease past its expiry is dropped by the next take anyway.
      for (const give of due) if (give.until > now) this.giveBack(give.lease, give.until);
    });
  }

  async incr(key: string, n: number, ttlMs: number): Promise<number> {
    const res = await this.guard.run((redis) => redis.multi().incrby(key, n).pexpire(key, ttlMs, 'NX').exec());
    return Number(res?.[0]?.[1] ?? 0);
  }

  async get(key: string): Promise<number> {
    return Number((await this.guard.run((redis) => redis.get(key))) ?? 0);
  }

  async takeSlot(lease: SlotLease): Promise<number> {
    let taking: Promise<number> | undefined;
    try {
      return Number(await this.guard.run(() => (taking = lease.olderCounterKey
        ? this.scripts.relayTakeSlot(2, lease.key, lease.olderCounterKey, lease.holder, this.slotTtlMs)
        : this.scripts.relayTakeSlot(1, lease.key, lease.holder, this.slotTtlMs))));
    } catch (err) {
      // The guard gave up (the caller fails open, holding no slot) but a slow Valkey may apply the
      // take after all: once it answered (or failed), end the lease, which is harmless if it never landed.
      const giveBack = () => this.giveBack(lease);
      taking?.then(giveBack, giveBack);
      throw err;
    }
  }

  async giveSlot(lease: SlotLease): Promise<void> {
    try {
      await this.guard.run((redis) => redis.zrem(lease.key, lease.holder));
    } catch (err) {
      // Sent or not, sending it again cannot end another holder's lease.
      this.giveBack(lease);
      throw err;
    }
  }

  async renewSlots(leases: readonly SlotLease[]): Promise<void> {
    // Not connected: the next round renews them; one that expires meanwhile counts no more (fail open).
    if (this.redis.status !== 'ready' || leases.length === 0) return;
    const holdersByKey = new Map<string, string[]>();
    for (const { key, holder } of leases) {
      const holders = holdersByKey.get(key);
      if (holders) holders.push(holder);
      else holdersByKey.set(key, [holder]);
    }
    const pipeline = this.redis.pipeline();
    const renewals = pipeline as typeof pipeline & LeaseRenewals;
    for (const [key, holders] of holdersByKey) renewals.relayRenewSlots(key, this.slotTtlMs, ...holders);
    const failed = (await pipeline.exec())?.find(([err]) => err);
    if (failed) throw failed[0] as Error;
  }

  /**
   * Gives a slot back off the request path: straight to the client (no short deadline, no
   * breaker: it lands whenever Valkey answers), or once the client is connected again when it
   * could not be sent or its answer was lost.
   */
  private giveBack(lease: SlotLease, until = Date.now() + this.slotTtlMs): void {
    if (this.redis.status !== 'ready') return this.keepUnsent(lease, until);
    this.redis.zrem(lease.key, lease.holder).catch(() => this.keepUnsent(lease, until));
  }

  /** `until`: when the lease has expired at the latest (it is no longer renewed once given back). */
  private keepUnsent(lease: SlotLease, until: number): void {
    const now = Date.now();
    if (this.unsent.length >= MAX_UNSENT_GIVES) this.unsent = this.unsent.filter((give) => give.until > now);
    if (this.unsent.length < MAX_UNSENT_GIVES) this.unsent.push({ lease, until });
  }
}
