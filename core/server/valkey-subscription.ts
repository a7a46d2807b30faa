// A Valkey pub/sub subscription that notices when its connection goes deaf. A subscriber sends no
// commands, so ioredis's commandTimeout and socketTimeout (valkey-options.ts) never fire on it: a
// Valkey that stops answering on that connection (black-holed, a partition without a RST) would
// leave it hearing nothing, for good. Every timeoutMs the connection is sent a PING (allowed in
// subscriber mode); one without an answer within timeoutMs, or answered on a connection that is no
// longer subscribed, drops it for a fresh one subscribed anew. That is warned once, until a fresh
// one answers; what was published meanwhile was missed, so onResubscribed is called then (and at
// each check after, until it succeeds: the other connections may still be the silent ones).
import type { Redis } from 'ioredis';

export interface ValkeySubscriptionOptions {
  /** Duplicated for each subscriber connection (its options, deadlines included). */
  redis: Redis;
  channel: string;
  /** How often the subscriber is pinged, and how long a ping may go unanswered (config valkey.timeoutMs). */
  timeoutMs: number;
  /** Who subscribes, for the log lines ("key health"). */
  what: string;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  onMessage(message: string): void;
  /** The subscription was lost and is back: what was published meanwhile was not heard. A rejection is retried at the next check. */
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
  private timer: NodeJS.Timeout | null = null;
  /** The last check failed (warned once; the next answer is logged and reloads). */
  private lost = false;
  private closed = false;

  constructor(private readonly options: ValkeySubscriptionOptions) {
    this.sub = this.open();
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const sub = this.sub;
    await sub.quit().catch(() => sub.disconnect());
  }

  private open(): Redis {
    const { redis, channel, what, log } = this.options;
    const sub = redis.duplicate();
    sub.on('error', (err: Error) => log.debug({ err: err.message }, `${what} subscriber error`));
    sub.on('message', (from: string, message: string) => { if (from === channel) this.options.onMessage(message); });
    // A failure here is seen by the next check (not subscribed) and warned about there, once.
    sub.subscribe(channel).catch((err: Error) => log.debug({ err: err.message }, `could not subscribe to ${what}`));
    return sub;
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.check(), this.options.timeoutMs);
    // A pending check must not keep a closing process alive.
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const { timeoutMs, what, log } = this.options;
    const sub = this.sub;
    const ok = await answers(sub, timeoutMs);
    if (this.closed) return;
    if (ok && this.lost) {
      const reloaded = await this.options.onResubscribed?.().then(() => true, (err: Error) => {
        log.debug({ err: err.message }, `${what} subscriber answers again, but reloading what was missed failed; retrying at the next check`);
        return false;
      }) ?? true;
      if (this.closed) return;
      if (reloaded) {
        this.lost = false;
        log.info({}, `${what} subscriber answers again; what was published meanwhile was reloaded`);
      }
    } else if (!ok) {
      if (!this.lost) log.warn({ timeoutMs }, `${what} subscriber did not answer a ping within ${timeoutMs} ms: replacing its Valkey connection (other instances' messages are not heard until one answers)`);
      this.lost = true;
      sub.disconnect();
      this.sub = this.open();
    }
    this.schedule();
  }
}
