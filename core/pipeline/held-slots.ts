// The concurrency-slot leases this instance holds, renewed while held: a request (a stream) may
// outlive its lease's TTL and must keep its slot. One loop per instance renews them all every
// third of the TTL, in one round trip; it runs only while some lease is held. A lease held past
// the maximum hold (a permit a bug never gave back) is no longer renewed, so it expires one TTL
// later: Relay has no maximum request duration, and without this a leaked slot would last forever.
import type { Counters, SlotLease } from './rate-limit-counters.ts';

export interface HeldSlotsOptions<L extends SlotLease> {
  /** How long a lease lasts unless renewed. */
  ttlMs: number;
  /** How long a lease is renewed at most, from its take (at least the TTL). */
  maxHoldMs: number;
  onRenewError(err: Error): void;
  /** Called once for a lease no longer renewed because it was held longer than the maximum hold. */
  onOverheld(lease: L): void;
}

export class HeldSlots<L extends SlotLease = SlotLease> {
  /** Each held lease and when it was taken. */
  private readonly held = new Map<L, number>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;
  private closed = false;

  constructor(private readonly counters: Counters, private readonly options: HeldSlotsOptions<L>) {}

  /** Takes a slot and holds it (renewed) until given back, whether or not it was within the limit. */
  async take(lease: L): Promise<number> {
    const inFlight = await this.counters.takeSlot(lease);
    this.held.set(lease, Date.now());
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => this.renew(), Math.max(1, Math.floor(this.options.ttlMs / 3)));
      this.timer.unref();
    }
    return inFlight;
  }

  /** Stops renewing and gives the slot back (a failure is the counters' to handle). */
  give(lease: L): void {
    this.held.delete(lease);
    this.counters.giveSlot(lease).catch(() => undefined);
  }

  /** Stops the loop; leases still held expire after their TTL. */
  close(): void {
    this.closed = true;
    this.stopLoop();
  }

  private renew(): void {
    this.dropOverheld(Date.now());
    if (this.held.size === 0) return this.stopLoop();
    // A round still waiting for Valkey: the next tick tries again rather than queue behind it.
    if (this.renewing) return;
    this.renewing = true;
    this.counters.renewSlots([...this.held.keys()]).then(() => { this.renewing = false; }, (err: Error) => {
      this.renewing = false;
      this.options.onRenewError(err);
    });
  }

  /** Stops renewing the leases held past the maximum hold; a give-back later still ends them at once. */
  private dropOverheld(now: number): void {
    for (const [lease, takenAt] of this.held) {
      if (now - takenAt < this.options.maxHoldMs) continue;
      this.held.delete(lease);
      this.options.onOverheld(lease);
    }
  }

  private stopLoop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
