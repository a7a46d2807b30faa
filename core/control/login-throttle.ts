// Slows down password guessing: sign-in attempts, and the current password a signed-in user
// gives to change it, are counted per username and per client address in Postgres
// (admin_login_failures), so every instance sees the same count. After the free failures,
// each further one locks the key for an exponentially growing time; a quiet period (the
// window) forgets the count. While a key is locked every attempt, even with the right
// password, is answered 429 RELAY_ERR_LOGIN_THROTTLED with retry-after.
//
// The check and the count are one step: admit() locks both rows (FOR UPDATE, in one order),
// refuses if either is locked, and otherwise counts the attempt as a failure before the
// password is checked; a success gives the count back. Parallel guesses, on one instance or
// many, queue on the row lock, so no more than the free ones and the locking one are checked.
import type { Database, Queryable } from '../db/types.ts';
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

/** An admitted attempt: its failure is already counted; report how the password check went. */
export interface LoginAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
}

interface Row {
  throttle_key: string;
  failures: number;
  stale: boolean;
  wait_ms: string | number | null;
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

  /** Counts the attempt, or throws 429 RELAY_ERR_LOGIN_THROTTLED when the username or the address is locked. */
  async admit(username: string, address: string): Promise<LoginAttempt> {
    const user = userKey(username);
    const addr = addressKey(address);
    await this.db.transaction(async (tx) => {
      // Rows first (a new key has none to lock), then both locked in key order: no deadlock.
      await tx.query(
        `INSERT INTO admin_login_failures (throttle_key, failures, last_failed_at) SELECT k, 0, now() FROM unnest($1::text[]) AS k
         ON CONFLICT (throttle_key) DO NOTHING`, [[user, addr]]);
      const res = await tx.query<Row>(
        `SELECT throttle_key, failures,
                last_failed_at < now() - ($2::double precision * interval '1 millisecond') AS stale,
                CASE WHEN locked_until > now() THEN extract(epoch FROM (locked_until - now())) * 1000 END AS wait_ms
         FROM admin_login_failures WHERE throttle_key = ANY($1::text[]) ORDER BY throttle_key FOR UPDATE`,
        [[user, addr], this.windowMs]);
      const waitMs = Math.max(0, ...res.rows.map((r) => Number(r.wait_ms ?? 0)));
      if (waitMs > 0) {
        const seconds = Math.max(1, Math.ceil(waitMs / 1000));
        throw new RelayError('RELAY_ERR_LOGIN_THROTTLED', `too many wrong passwords for this user or from this address; try again in ${seconds}s`, {
          headers: { 'retry-after': String(seconds) },
        });
      }
      for (const row of res.rows) await this.count(tx, row, row.throttle_key === user ? this.userFree : this.addressFree);
    });
    return {
      failed: () => this.forgetQuiet(),
      // The username starts over; the address gets back the failure counted for this attempt,
      // and the lock that attempt may have set.
      succeeded: async () => {
        await this.db.query('DELETE FROM admin_login_failures WHERE throttle_key = $1', [user]);
        await this.db.query(
          `UPDATE admin_login_failures SET failures = greatest(failures - 1, 0),
             locked_until = CASE WHEN failures - 1 <= $2 THEN NULL ELSE locked_until END
           WHERE throttle_key = $1`, [addr, this.addressFree]);
      },
    };
  }

  private async count(tx: Queryable, row: Row, free: number): Promise<void> {
    const failures = row.stale ? 1 : Number(row.failures) + 1;
    const lockMs = failures > free ? Math.min(this.baseLockMs * 2 ** Math.min(failures - free - 1, 30), this.maxLockMs) : null;
    await tx.query(
      `UPDATE admin_login_failures SET failures = $2, last_failed_at = now(),
         locked_until = CASE WHEN $3::double precision IS NULL THEN NULL ELSE now() + ($3::double precision * interval '1 millisecond') END
       WHERE throttle_key = $1`, [row.throttle_key, failures, lockMs]);
  }

  /** Rows quiet for longer than the window (and not locked) are forgotten. */
  private async forgetQuiet(): Promise<void> {
    await this.db.query(
      `DELETE FROM admin_login_failures WHERE last_failed_at < now() - ($1::double precision * interval '1 millisecond')
       AND (locked_until IS NULL OR locked_until < now())`, [this.windowMs]);
  }
}

function userKey(username: string): string {
  return `user:${username.toLowerCase()}`;
}

function addressKey(address: string): string {
  return `ip:${address}`;
}
