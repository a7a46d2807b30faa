// Where rate limits count: windowed counters (requests and tokens per minute) and concurrency-slot
// leases. A slot is a lease per holder (one request) that ends when it is given back or, if its
// holder is gone without giving it back (an instance killed mid-request, a take whose answer was
// lost), when it expires: a leak lasts one lease, however busy the key. Holders renew their leases
// while they hold them (held-slots.ts). In memory here; shared through Valkey in rate-limit-valkey.ts.

/** How long a slot lease lasts unless renewed: how long a slot outlives a holder that is gone. */
export const CONCURRENCY_SLOT_TTL_MS = 10 * 60_000;

/** One holder's lease on a limit's concurrency slots. */
export interface SlotLease {
  /** The limit's leases (one key per relay key and limit). */
  key: string;
  /** The request holding the slot: unique across instances. */
  holder: string;
  /** The counter older releases INCR for the same slots (`:conc`): counted too while they run (a rolling upgrade). */
  olderCounterKey?: string;
}

export interface Counters {
  /** Adds `n` to a windowed counter (its TTL starts with the window); returns the new value. */
  incr(key: string, n: number, ttlMs: number): Promise<number>;
  get(key: string): Promise<number>;
  /** Leases a slot for the slot TTL, dropping expired leases first; returns the live leases, this one included. */
  takeSlot(lease: SlotLease): Promise<number>;
  /** Ends a lease; one already ended or expired stays so, hence a give-back may be sent again safely. */
  giveSlot(lease: SlotLease): Promise<void>;
  /** Extends leases not yet dropped to the slot TTL from now; ended ones stay ended. Off the request path. */
  renewSlots(leases: readonly SlotLease[]): Promise<void>;
}

/** A limit's leases: each holder's expiry, and a time at or before the soonest of them. */
interface LeaseTable {
  expiries: Map<string, number>;
  sweepAt: number;
}

export class MemoryCounters implements Counters {
  private readonly values = new Map<string, { value: number; expires: number }>();
  private readonly leases = new Map<string, LeaseTable>();

  constructor(private readonly slotTtlMs: number) {}

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

  async takeSlot(lease: SlotLease): Promise<number> {
    const now = Date.now();
    const expires = now + this.slotTtlMs;
    const table = this.leases.get(lease.key);
    if (!table) {
      this.leases.set(lease.key, { expiries: new Map([[lease.holder, expires]]), sweepAt: expires });
      return 1;
    }
    // Renewals only push expiries later, so sweepAt stays a lower bound: most takes scan nothing.
    if (table.sweepAt <= now) dropExpired(table, now);
    table.expiries.set(lease.holder, expires);
    table.sweepAt = Math.min(table.sweepAt, expires);
    return table.expiries.size;
  }

  async giveSlot(lease: SlotLease): Promise<void> {
    const table = this.leases.get(lease.key);
    if (!table) return;
    table.expiries.delete(lease.holder);
    if (table.expiries.size === 0) this.leases.delete(lease.key);
  }

  async renewSlots(leases: readonly SlotLease[]): Promise<void> {
    const expires = Date.now() + this.slotTtlMs;
    for (const lease of leases) {
      const expiries = this.leases.get(lease.key)?.expiries;
      if (expiries?.has(lease.holder)) expiries.set(lease.holder, expires);
    }
  }

  private live(key: string, now: number): { value: number; expires: number } | undefined {
    const entry = this.values.get(key);
    return entry && entry.expires > now ? entry : undefined;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.values) if (v.expires <= now) this.values.delete(k);
  }
}

function dropExpired(table: LeaseTable, now: number): void {
  let soonest = Infinity;
  for (const [holder, expires] of table.expiries) {
    if (expires <= now) table.expiries.delete(holder);
    else soonest = Math.min(soonest, expires);
  }
  table.sweepAt = soonest;
}
