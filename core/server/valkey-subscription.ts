// A Valkey pub/sub subscription that notices when its connection goes deaf. A subscriber sends no
// commands, so ioredis's commandTimeout and socketTimeout (valkey-options.ts) never fire on it: a
// Valkey that stops answering on that connection (black-holed, a partition without a RST) would
// leave it hearing nothing, for good. Every timeoutMs the connection is sent a PING (allowed in
// subscriber mode); one without an answer within timeoutMs, or answered on a connection that is no
// longer subscribed (or closed), drops it for a fresh one subscribed anew. While fresh ones do not
// answer either, each replacement waits longer than the last (doubling from 2 x timeoutMs up to
// maxBackoffMs, with jitter). That is warned once, and logged at info once one answers; what was
// published meanwhile was missed, so onResubscribed is called then (and at each check after, until
// it succeeds: the other connections may still be the silent ones).
import type { Redis } from 'ioredis';

/**
 * The longest wait between two replacements while Valkey does not answer: an instance deaf that long
 * after Valkey is back misses nothing for good (onResubscribed catches up), and a fleet of instances
 * opens at most one subscriber connection each per 30 s against a Valkey that is struggling.
 */
export const RESUBSCRIBE_MAX_BACKOFF_MS = 30_000;

export interface ValkeySubscriptionOptions {
  /** Duplicated for each subscriber connection (its options, deadlines included). */
  redis: Redis;
  channel: string;
  /** How often the subscriber is pinged, and how long a ping may go unanswered (config valkey.timeoutMs). */
  timeoutMs: number;
  /** The longest wait between two replacements (RESUBSCRIBE_MAX_BACKOFF_MS; never below 2 x timeoutMs). */
  maxBackoffMs?: number;
  /** Who subscribes, for the log lines ("key health"). */
  what: string;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  onMessage(message: string): void;
  /**
   * The subscription was lost and is back (subscribed before this is called, so a message published
   * from now on is heard): what was published meanwhile was not heard. A rejection is retried at the next check.
   */
  onResubscribed?(): Promise<void>;
}

/** The subscriber answered the ping within ms, on a connection still subscribed. */
async function answers(sub: Redis, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(resolve, ms, false); });
  const pong = sub.ping().then(() => sub.mode === 'subscriber', () => false);
  try {
    return await Promise.race([pong, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class ValkeySubscription {
  private sub: Redis;
  /** When this.sub was opened (the interval between replacements counts from there). */
  private openedAt = Date.now();
  /** The next check, or the next replacement while backing off. */
  private timer: NodeJS.Timeout | null = null;
  /** The last check failed (warned once; the next answer is logged and reloads). */
  private lost = false;
  /** Replacements since a subscriber last answered (the backoff's exponent). */
  private failures = 0;
  private lostSince = 0;
  private closed = false;

  constructor(private readonly options: ValkeySubscriptionOptions) {
    this.sub = this.open();
    this.schedule(options.timeoutMs, () => this.check());
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const sub = this.sub;
    await sub.quit().catch(() => sub.disconnect());
  }

  private open(): Redis {
    const { redis, channel, what, log } = this.options;
    // No reconnection of its own: every lost connection goes through check() (backoff, reload of what was missed).
    // Its SUBSCRIBE and PINGs wait for the connection (offline queue): sent late, they change nothing.
    const sub = redis.duplicate({ retryStrategy: () => null, enableOfflineQueue: true });
    sub.on('error', (err: Error) => log.debug({ err: err.message }, `${what} subscriber error`));
    sub.on('message', (from: string, message: string) => { if (from === channel) this.options.onMessage(message); });
    // A failure here is seen by the next check (not subscribed) and warned about there, once.
    sub.subscribe(channel).catch((err: Error) => log.debug({ err: err.message }, `could not subscribe to ${what}`));
    this.openedAt = Date.now();
    return sub;
  }

  private schedule(ms: number, next: () => Promise<void> | void): void {
    this.timer = setTimeout(() => void next(), ms);
    // A pending check or replacement must not keep a closing process alive.
    this.timer.unref();
  }

  /**
   * How long after the last replacement the next one may be: 2 x timeoutMs (a check's wait and a
   * ping's deadline) after the first, doubled at each one after, capped, less up to a quarter.
   */
  private interval(): number {
    const { timeoutMs, maxBackoffMs = RESUBSCRIBE_MAX_BACKOFF_MS } = this.options;
    const cap = Math.max(maxBackoffMs, 2 * timeoutMs);
    // Jitter below the cap (never above it): instances that lost Valkey together do not come back in step.
    return Math.min(cap, 2 * timeoutMs * 2 ** Math.min(Math.max(0, this.failures - 2), 30)) * (1 - Math.random() / 4);
  }

  private async check(): Promise<void> {
    const { timeoutMs, what, log } = this.options;
    const sub = this.sub;
    const ok = await answers(sub, timeoutMs);
    if (this.closed) return;
    if (ok) {
      this.failures = 0;
      if (this.lost) {
        const reloaded = await this.options.onResubscribed?.().then(() => true, (err: Error) => {
          log.debug({ err: err.message }, `${what} subscriber answers again, but reloading what was missed failed; retrying at the next check`);
          return false;
        }) ?? true;
        if (this.closed) return;
        if (reloaded) {
          this.lost = false;
          log.info({ deafMs: Date.now() - this.lostSince }, `${what} subscriber answers again; what was published meanwhile was reloaded`);
        }
      }
      this.schedule(timeoutMs, () => this.check());
      return;
    }
    this.failures++;
    const wait = Math.max(0, this.openedAt + this.interval() - Date.now());
    if (!this.lost) {
      const cap = Math.max(this.options.maxBackoffMs ?? RESUBSCRIBE_MAX_BACKOFF_MS, 2 * timeoutMs);
      log.warn({ timeoutMs, maxBackoffMs: cap }, `${what} subscriber did not answer a ping within ${timeoutMs} ms: replacing its Valkey connection, and again with waits growing up to ${cap} ms until one answers (other instances' messages are not heard until then)`);
      this.lost = true;
      this.lostSince = Date.now();
    }
    sub.disconnect();
    log.debug({ failures: this.failures, waitMs: Math.round(wait) }, `${what} subscriber: replacing its Valkey connection`);
    this.schedule(wait, () => {
      if (this.closed) return;
      this.sub = this.open();
      this.schedule(timeoutMs, () => this.check());
    });
  }
}
