// Slows down password guessing: failed sign-ins are counted per username and per client
// address in Postgres (admin_login_failures), so every instance sees the same count. After
// the free failures, each further one locks the key for an exponentially growing time; a
// quiet period (the window) forgets the count. While a key is locked every attempt, even
// with the right password, is answered 429 RELAY_ERR_LOGIN_THROTTLED with retry-after.
import type { Database } from '../db/types.ts';
import { RelayError } from '../errors.ts';

export interface LoginThrottleOptions {
  /** Failures per username before locks start. Default 5. */
  userFreeFailures?: number;
  /** Failures per client address before locks start (several people may share one). Default 20. */
  addressFreeFailures?: number;
  /** A key with no failure for this long starts over. Default 15 minutes. */
  windowMs?: number;
  /** First lock; doubles with each further failure. Default 1 s. */
  baseLockMs?: number;
  /** Longest lock. Default 15 minutes. */
  maxLockMs?: number;
}

export class LoginThrottle {
  private readonly userFree: number;
  private readonly addressFree: number;
  private readonly windowMs: number;
  private readonly baseLockMs: number;
  private readonly maxLockMs: number;

  constructor(private readonly db: Database, options: LoginThrottleOptions = {}) {
    this.userFree = options.userFreeFailures ?? 5;
    this.addressFree = options.addressFreeFailures ?? 20;
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.baseLockMs = options.baseLockMs ?? 1_000;
    this.maxLockMs = options.maxLockMs ?? 15 * 60_000;
  }

  /** Throws 429 RELAY_ERR_LOGIN_THROTTLED when the username or the address is locked now. */
  async check(username: string, address: string): Promise<void> {
    const res = await this.db.query<{ wait_ms: string | number | null }>(
      `SELECT max(extract(epoch FROM (locked_until - now())) * 1000) AS wait_ms FROM admin_login_failures
       WHERE throttle_key = ANY($1::text[]) AND locked_until > now()`,
      [[userKey(username), addressKey(address)]]);
    const waitMs = Number(res.rows[0]?.wait_ms ?? 0);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new RelayError('RELAY_ERR_LOGIN_THROTTLED', `too many failed sign-in attempts; try again in ${seconds}s`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
  }

  async recordFailure(username: string, address: string): Promise<void> {
    await this.bump(userKey(username), this.userFree);
    await this.bump(addressKey(address), this.addressFree);
    await this.db.query(
      `DELETE FROM admin_login_failures WHERE last_failed_at < now() - ($1::double precision * interval '1 millisecond')
       AND (locked_until IS NULL OR locked_until < now())`, [this.windowMs]);
  }

  /** A successful sign-in clears the username's count (the address keeps its own). */
  async recordSuccess(username: string): Promise<void> {
    await this.db.query('DELETE FROM admin_login_failures WHERE throttle_key = $1', [userKey(username)]);
  }

  private async bump(key: string, free: number): Promise<void> {
    const res = await this.db.query<{ failures: number }>(
      `INSERT INTO admin_login_failures (throttle_key, failures, last_failed_at) VALUES ($1, 1, now())
       ON CONFLICT (throttle_key) DO UPDATE SET
         failures = CASE WHEN admin_login_failures.last_failed_at < now() - ($2::double precision * interval '1 millisecond')
                         THEN 1 ELSE admin_login_failures.failures + 1 END,
         last_failed_at = now()
       RETURNING failures`, [key, this.windowMs]);
    const failures = Number(res.rows[0]?.failures ?? 0);
    if (failures <= free) return;
    const lockMs = Math.min(this.baseLockMs * 2 ** Math.min(failures - free - 1, 30), this.maxLockMs);
    await this.db.query(
      `UPDATE admin_login_failures SET locked_until = now() + ($2::double precision * interval '1 millisecond') WHERE throttle_key = $1`,
      [key, lockMs]);
  }
}

function userKey(username: string): string {
  return `user:${username.toLowerCase()}`;
}

function addressKey(address: string): string {
  return `ip:${address}`;
}
