// Host-key health (DESIGN.md "Health and states"):
//   healthy -> cooling   on 429, 5xx or timeout; until retry-after or an exponential backoff
//   healthy -> invalid   when the upstream answered 401/403; until an operator edits the key
//                        (its updatedAt changes) or a trial request after PROBE_AFTER_MS succeeds
//   healthy -> invalid   on this instance only, when its value cannot be had here (reportUnusable)
//   disabled             spec.enabled is false (operator)
// Kept in memory per instance (the hot path reads a Map); shared through Valkey pub/sub when
// one is configured, so every instance stops using a failing key.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { HostKey } from '../catalog/kinds.ts';

export type KeyState = 'healthy' | 'cooling' | 'invalid' | 'disabled';

export type FailureKind = 'rate_limit' | 'server' | 'timeout' | 'connect' | 'auth';

interface Mark {
  state: 'cooling' | 'invalid';
  until: number;
  reason: string;
  /** Consecutive failures, for the backoff. */
  failures: number;
  /** updatedAt of the key when it was marked invalid. */
  keyVersion?: string;
}

export interface KeyHealthItem {
  hostKeyId: string;
  state: KeyState;
  until?: string;
  reason?: string;
}

const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
const PROBE_AFTER_MS = 5 * 60_000;
const CHANNEL = 'relay:key-health';
const STORE_PREFIX = 'relay:key-health:mark:';

export class KeyHealth {
  private readonly marks = new Map<string, Mark>();
  private readonly redis: Redis | null;
  private subscriber: Redis | null = null;
  private readonly log: Logger;
  private readonly instance = Math.random().toString(36).slice(2);

  constructor(options: { redis: Redis | null; log: Logger }) {
    this.redis = options.redis;
    this.log = options.log;
    if (this.redis) this.subscribe(this.redis);
  }

  /**
   * Loads the marks other instances stored in Valkey, so an instance that starts (or reconnects)
   * after a key was marked knows it too. Called once at start-up; a failure only means starting
   * with nothing marked, as without Valkey.
   */
  async loadShared(): Promise<void> {
    if (!this.redis) return;
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${STORE_PREFIX}*`, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0' && keys.length < 100_000);
      if (keys.length === 0) return;
      const values = await this.redis.mget(...keys);
      const now = Date.now();
      keys.forEach((key, i) => {
        const value = values[i];
        if (!value) return;
        const mark = JSON.parse(value) as Mark;
        if (mark.until > now) this.marks.set(key.slice(STORE_PREFIX.length), mark);
      });
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not load shared key health');
    }
  }

  /** True when the key may be tried now. */
  isAvailable(key: HostKey, now = Date.now()): boolean {
    if (!key.spec.enabled) return false;
    const mark = this.marks.get(key.metadata.id);
    if (!mark) return true;
    if (mark.state === 'invalid' && mark.keyVersion !== key.metadata.updatedAt) {
      this.marks.delete(key.metadata.id); // the operator edited it
      return true;
    }
    return now >= mark.until;
  }

  /** Earliest time (ms) one of these keys becomes available again, or null. */
  soonestAvailable(keys: readonly HostKey[]): number | null {
    let soonest: number | null = null;
    for (const key of keys) {
      const mark = this.marks.get(key.metadata.id);
      if (mark && key.spec.enabled && (soonest === null || mark.until < soonest)) soonest = mark.until;
    }
    return soonest;
  }

  reportSuccess(key: HostKey): void {
    if (this.marks.delete(key.metadata.id)) this.broadcast(key.metadata.id, null);
  }

  reportFailure(key: HostKey, kind: FailureKind, retryAfterMs: number | null, reason: string): void {
    const id = key.metadata.id;
    const previous = this.marks.get(id);
    const failures = (previous?.failures ?? 0) + 1;
    let mark: Mark;
    if (kind === 'auth') {
      mark = { state: 'invalid', until: Date.now() + PROBE_AFTER_MS, reason, failures, keyVersion: key.metadata.updatedAt };
    } else {
      const backoff = Math.min(BASE_BACKOFF_MS * 2 ** (failures - 1), MAX_BACKOFF_MS);
      mark = { state: 'cooling', until: Date.now() + (retryAfterMs ?? backoff), reason, failures };
    }
    this.marks.set(id, mark);
    this.broadcast(id, mark);
  }

  /**
   * Marks a key invalid on this instance only: its value cannot be had here (an unset environment
   * variable, a value sealed under another master key). That is this instance's configuration, not
   * the key's health, so it is not shared: other instances keep using the key.
   */
  reportUnusable(key: HostKey, reason: string): void {
    this.marks.set(key.metadata.id, { state: 'invalid', until: Date.now() + PROBE_AFTER_MS, reason, failures: 1, keyVersion: key.metadata.updatedAt });
  }

  /** Every host key of the snapshot with its state (for the admin API and dashboard). */
  states(snapshot: CatalogSnapshot, now = Date.now()): KeyHealthItem[] {
    const out: KeyHealthItem[] = [];
    for (const key of snapshot.hostKeys.values()) {
      if (!key.spec.enabled) {
        out.push({ hostKeyId: key.metadata.id, state: 'disabled' });
        continue;
      }
      const mark = this.marks.get(key.metadata.id);
      if (!mark || (mark.state === 'cooling' && now >= mark.until) || (mark.state === 'invalid' && mark.keyVersion !== key.metadata.updatedAt)) {
        out.push({ hostKeyId: key.metadata.id, state: 'healthy' });
      } else {
        out.push({ hostKeyId: key.metadata.id, state: mark.state, until: new Date(mark.until).toISOString(), reason: mark.reason });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = null;
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }

  /** Tells the running instances (pub/sub) and stores the mark for those that start later. */
  private broadcast(id: string, mark: Mark | null): void {
    if (!this.redis) return;
    const store = mark
      ? this.redis.set(`${STORE_PREFIX}${id}`, JSON.stringify(mark), 'PX', Math.max(1, mark.until - Date.now()))
      : this.redis.del(`${STORE_PREFIX}${id}`);
    Promise.all([store, this.redis.publish(CHANNEL, JSON.stringify({ from: this.instance, id, mark }))]).catch((err: Error) => {
      this.log.debug({ err: err.message }, 'could not share key health');
    });
  }

  private subscribe(redis: Redis): void {
    const sub = redis.duplicate();
    this.subscriber = sub;
    sub.on('error', (err) => this.log.debug({ err: err.message }, 'key health subscriber error'));
    sub.on('message', (_channel: string, message: string) => {
      try {
        const { from, id, mark } = JSON.parse(message) as { from: string; id: string; mark: Mark | null };
        if (from === this.instance) return;
        if (mark) this.marks.set(id, mark);
        else this.marks.delete(id);
      } catch {
        /* a malformed message from another version: ignore */
      }
    });
    sub.subscribe(CHANNEL).catch((err: Error) => this.log.warn({ err: err.message }, 'could not subscribe to key health'));
  }
}
