// Claims a budget alert in Valkey (SET NX): of the instances sharing Valkey, one wins per budget,
// window and threshold, even when each has its own database. The key outlives the window by a day.
import type { Redis } from 'ioredis';

const GRACE_MS = 86_400_000;

export class ValkeyAlertClaims {
  constructor(private readonly redis: Redis, private readonly prefix = 'relay:budget-alert') {}

  private key(budgetId: string, windowStartMs: number, threshold: number): string {
    return `${this.prefix}:${budgetId}:${windowStartMs}:${threshold}`;
  }

  /** True when this call won the alert; `windowEndMs` null keeps the claim forever (lifetime budgets). */
  async claim(budgetId: string, windowStartMs: number, threshold: number, windowEndMs: number | null, now = Date.now()): Promise<boolean> {
    const key = this.key(budgetId, windowStartMs, threshold);
    const answer = windowEndMs === null
      ? await this.redis.set(key, String(now), 'NX')
      : await this.redis.set(key, String(now), 'PX', Math.max(1, windowEndMs + GRACE_MS - now), 'NX');
    return answer === 'OK';
  }

  /** Gives a claim back (its alert could not be recorded), so a later request fires it. */
  async release(budgetId: string, windowStartMs: number, threshold: number): Promise<void> {
    await this.redis.del(this.key(budgetId, windowStartMs, threshold));
  }
}
