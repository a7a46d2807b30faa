// The concurrency-slot leases this instance holds, renewed while held: a request (a stream) may
// outlive its lease's TTL and must keep its slot. One loop per instance renews them all every
// third of the TTL, in one round trip; it runs only while some lease is held.
import type { Counters, SlotLease } from './rate-limit-counters.ts';

export class HeldSlots {
  private readonly held = new Set<SlotLease>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;
  private closed = false;

  constructor(private readonly counters: Counters, private readonly ttlMs: number, private readonly onRenewError: (err: Error) => void) {}

  /** Takes a slot and holds it (renewed) until given back, whether or not it was within the limit. */
  async take(lease: SlotLease): Promise<number> {
    const inFlight = await this.counters.takeSlot(lease);
    this.held.add(lease);
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => this.renew(), Math.max(1, Math.floor(this.ttlMs / 3)));
      this.timer.unref();
    }
    return inFlight;
  }

  /** Stops renewing and gives the slot back (a failure is the counters' to handle). */
  give(lease: SlotLease): void {
    this.held.delete(lease);
    this.counters.giveSlot(lease).catch(() => undefined);
  }

  /** Stops the loop; leases still held expire after their TTL. */
  close(): void {
    this.closed = true;
    this.stopLoop();
  }

  private renew(): void {
    if (this.held.size === 0) return this.stopLoop();
    // A round still waiting for Valkey: the next tick tries again rather than queue behind it.
    if (this.renewing) return;
    this.renewing = true;
    this.counters.renewSlots([...this.held]).then(() => { this.renewing = false; }, (err: Error) => {
      this.renewing = false;
      this.onRenewError(err);
    });
  }

  private stopLoop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
