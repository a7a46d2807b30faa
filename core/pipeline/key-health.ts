// Host-key health (DESIGN.md "Health and states"):
//   healthy -> cooling    on a 429 (a rate limit is about the key): until retry-after, or an
//                         exponential backoff when the upstream gives none
//   healthy -> open       a circuit per host and per host key: after `failures` 5xx, timeouts or
//                         refused connections in a row within `windowMs` (one failing request
//                         never does); for `openMs`, then half-open: one probe request is let
//                         through, and its success closes the circuit, its failure reopens it
//   healthy -> invalid    when the upstream answered 401/403; until an operator edits the key
//                         (its updatedAt changes) or a trial request after PROBE_AFTER_MS succeeds
//   healthy -> invalid    on this instance only, when its value cannot be had here (reportUnusable);
//                         until it ends, it outranks the shared marks: one may make it last longer,
//                         none cuts it short or clears it (the value still cannot be had here)
//   disabled              spec.enabled is false (operator)
// A 4xx the caller's body causes (400, 404, 413, 422) says nothing about the key and is not counted.
// A key's marks and failure runs are about the version of it (key-version.ts) the request met them
// with: an edit leaves the new version healthy, and what a request sent before the edit meets later
// (a success, a 401, a 429) neither clears, replaces nor sets the new version's marks.
// Kept in memory per instance (the hot path reads a Map); marks are shared through Valkey pub/sub
// when one is configured, so every instance stops using a failing key, and stored there for the
// instances that start later, version-guarded too (key-health-store.ts). Failure runs and probes
// are per instance: each instance lets its own probe through.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import { VALKEY_TIMEOUT_MS } from '../server/valkey-options.ts';
import { ValkeySubscription } from '../server/valkey-subscription.ts';
import type { HostKey } from '../catalog/kinds.ts';
import { DEFAULT_BREAKER, FailureRuns, type BreakerSettings } from './failure-runs.ts';
import { olderVersion, sameVersion } from './key-version.ts';
import { defineShareMark, type ShareMark } from './key-health-store.ts';

export type KeyState = 'healthy' | 'cooling' | 'open' | 'half-open' | 'invalid' | 'disabled';

export type FailureKind = 'rate_limit' | 'server' | 'timeout' | 'connect' | 'auth';

interface Mark {
  state: 'cooling' | 'open' | 'invalid';
  until: number;
  reason: string;
  /** Consecutive rate limits, for the backoff. */
  failures: number;
  /** The version (updatedAt) of the key the mark is about; none on a host's, or one stored by an instance from before versions (about every version). */
  keyVersion?: string;
}

export interface KeyHealthItem {
  hostKeyId: string;
  state: KeyState;
  until?: string;
  reason?: string;
}

/** Why a key may not be tried now (for the answer when no key is left). */
export interface Blocker {
  state: 'cooling' | 'open' | 'invalid';
  /** When the key may be tried again (ms). */
  until: number;
  /** The host's circuit, not the key's own mark. */
  host: boolean;
}

type Scope = 'key' | 'host';

interface Claim {
  no: number;
  at: number;
}

const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
const PROBE_AFTER_MS = 5 * 60_000;
/** A probe whose outcome never came (its client left) frees the half-open circuit after this. */
const PROBE_CLAIM_MS = 60_000;
const CHANNEL = 'relay:key-health';
const STORE_ROOT = 'relay:key-health:';
const STORE_PREFIX: Record<Scope, string> = { key: `${STORE_ROOT}mark:`, host: `${STORE_ROOT}host:` };

/** admit(): the key may not be tried now (its half-open circuit's probe is in flight). */
export const REFUSED = -1;
/** admit(): the key may be tried, and nothing is to be released afterwards. */
export const ADMITTED = 0;

export class KeyHealth {
  private readonly marks: Record<Scope, Map<string, Mark>> = { key: new Map(), host: new Map() };
  private readonly runs: Record<Scope, FailureRuns>;
  /** Half-open circuits' probes in flight on this instance. */
  private readonly probes: Record<Scope, Map<string, Claim>> = { key: new Map(), host: new Map() };
  private claims = 0;
  private readonly breaker: BreakerSettings;
  private readonly redis: Redis | null;
  /** Stores and publishes a mark, version-guarded; null without Valkey. */
  private readonly shareMark: ShareMark | null;
  private subscription: ValkeySubscription | null = null;
  private readonly log: Logger;
  private readonly instance = Math.random().toString(36).slice(2);
  /** Shared marks Valkey's store does not hold (setMark's until their write is confirmed). */
  private readonly unshared = new WeakSet<Mark>();
  /** reportUnusable's marks, by key id (never shared): while one is in force, marks.key holds it, or it lengthened by the shared mark. */
  private readonly unusable = new Map<string, Mark>();
  /** The key's shared mark while its reportUnusable mark is in force (what the store and the other instances hold). */
  private readonly sharedBehind = new Map<string, Mark>();
  /** Marks changed while a read of the store is under way, one set per read: the read may predate the change. */
  private readonly reads = new Set<Set<string>>();

  /**
   * valkeyTimeoutMs (config valkey.timeoutMs): how often the subscriber is pinged, and its deadline;
   * subscriberMaxBackoffMs: the longest wait between two replacements of a silent subscriber (30 s).
   */
  constructor(options: { redis: Redis | null; log: Logger; breaker?: BreakerSettings; valkeyTimeoutMs?: number; subscriberMaxBackoffMs?: number }) {
    this.redis = options.redis;
    this.shareMark = this.redis ? defineShareMark(this.redis) : null;
    this.log = options.log;
    this.breaker = options.breaker ?? DEFAULT_BREAKER;
    this.runs = { key: new FailureRuns(this.breaker), host: new FailureRuns(this.breaker) };
    if (this.redis) {
      this.subscription = new ValkeySubscription({
        redis: this.redis, channel: CHANNEL, timeoutMs: options.valkeyTimeoutMs ?? VALKEY_TIMEOUT_MS, maxBackoffMs: options.subscriberMaxBackoffMs, what: 'key health', log: this.log,
        onMessage: (message) => this.received(message),
        // Marks published or cleared while the subscriber was deaf: the store says which are left.
        onResubscribed: () => this.reload(),
      });
    }
  }

  /**
   * Loads the marks other instances stored in Valkey, so an instance that starts after a key was
   * marked knows it too. Called once at start-up; a failure only means starting with nothing
   * marked, as without Valkey.
   */
  async loadShared(): Promise<void> {
    try {
      await this.reload();
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not load shared key health');
    }
  }

  /**
   * Makes the marks those stored in Valkey: takes the stored ones (not expired), and drops those
   * the store no longer holds (cleared by another instance). Rejects when Valkey does not answer.
   * The subscriber is subscribed before it is called, so a change published during the read is
   * heard: a mark changed meanwhile (heard, or set here) is left as it is, the read may predate it.
   */
  private async reload(): Promise<void> {
    if (!this.redis) return;
    const changed = new Set<string>();
    this.reads.add(changed);
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${STORE_ROOT}*`, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0' && keys.length < 100_000);
      const values = keys.length > 0 ? await this.redis.mget(...keys) : [];
      const stored: Record<Scope, Map<string, Mark>> = { key: new Map(), host: new Map() };
      keys.forEach((key, i) => {
        const value = values[i];
        const scope: Scope | null = key.startsWith(STORE_PREFIX.key) ? 'key' : key.startsWith(STORE_PREFIX.host) ? 'host' : null;
        if (value && scope) stored[scope].set(key.slice(STORE_PREFIX[scope].length), JSON.parse(value) as Mark);
      });
      const now = Date.now();
      for (const scope of ['key', 'host'] as const) {
        for (const [id, mark] of stored[scope]) {
          const stale = scope === 'key' && this.stale(id, mark.keyVersion, true);
          if (mark.until > now && !changed.has(`${scope}:${id}`) && !stale) this.putShared(scope, id, mark);
        }
        // A store listed in part (cursor not back to 0) cannot say what is missing from it.
        if (cursor !== '0') continue;
        for (const [id, seen] of this.marks[scope]) {
          // Behind a reportUnusable mark, only the shared one is the store's to drop.
          const mark = scope === 'key' && this.unusable.has(id) ? this.sharedBehind.get(id) : seen;
          // Missing before its end: cleared elsewhere (past its end it expired there; its probe decides here).
          // One set here that never reached the store is kept, not republished: others used the key since, and may have cleared it.
          if (mark && mark.until > now && !stored[scope].has(id) && !this.unshared.has(mark) && !changed.has(`${scope}:${id}`)) {
            this.putShared(scope, id, null);
            this.probes[scope].delete(id);
          }
        }
      }
    } finally {
      this.reads.delete(changed);
    }
  }

  /** True when the key may be tried now: enabled, not cooling or invalid, its own and its host's circuits not open. */
  isAvailable(key: HostKey, now = Date.now()): boolean {
    if (!key.spec.enabled) return false;
    return this.passable('key', key.metadata.id, key, now) && this.passable('host', key.spec.hostId, null, now);
  }

  /**
   * Called just before a request is sent with the key: a half-open circuit (the key's or its
   * host's) lets one probe through. REFUSED when another request is that probe or the circuit
   * is open; ADMITTED; or a claim number (> 0) to give to releaseProbe once the attempt is over.
   */
  admit(key: HostKey, now = Date.now()): number {
    const found = this.marks.key.get(key.metadata.id);
    // A mark of another version of the key is not about this request's.
    const keyMark = found && sameVersion(found.keyVersion, key.metadata.updatedAt) ? found : undefined;
    const hostMark = this.marks.host.get(key.spec.hostId);
    if (!keyMark && !hostMark) return ADMITTED;
    // Opened since the routes were chosen (an earlier attempt of this request completed the run).
    if ((keyMark?.state === 'open' && now < keyMark.until) || (hostMark?.state === 'open' && now < hostMark.until)) return REFUSED;
    const keyHalfOpen = keyMark?.state === 'open';
    const hostHalfOpen = hostMark?.state === 'open';
    if (!keyHalfOpen && !hostHalfOpen) return ADMITTED;
    if ((keyHalfOpen && this.claimed('key', key.metadata.id, now)) || (hostHalfOpen && this.claimed('host', key.spec.hostId, now))) return REFUSED;
    const claim = { no: ++this.claims, at: now };
    if (keyHalfOpen) this.probes.key.set(key.metadata.id, claim);
    if (hostHalfOpen) this.probes.host.set(key.spec.hostId, claim);
    return claim.no;
  }

  /** The probe's attempt is over without a verdict (a 4xx, the client left): the next request probes. */
  releaseProbe(key: HostKey, claim: number): void {
    if (this.probes.key.get(key.metadata.id)?.no === claim) this.probes.key.delete(key.metadata.id);
    if (this.probes.host.get(key.spec.hostId)?.no === claim) this.probes.host.delete(key.spec.hostId);
  }

  /** Why an enabled key may not be tried now, or null when it may. */
  blocker(key: HostKey, now = Date.now()): Blocker | null {
    if (this.isAvailable(key, now)) return null;
    const own = this.marks.key.get(key.metadata.id);
    const host = this.marks.host.get(key.spec.hostId);
    // A half-open circuit whose probe is in flight: the answer comes within a request's time.
    const untilOf = (mark: Mark) => (mark.until > now ? mark.until : now + 1_000);
    const ownBlocks = own && !this.passable('key', key.metadata.id, key, now);
    const hostBlocks = host && !this.passable('host', key.spec.hostId, null, now);
    if (ownBlocks && hostBlocks) {
      // The later one decides when the key is back; on a tie the host's circuit says more.
      return untilOf(own) > untilOf(host) ? { state: own.state, until: untilOf(own), host: false } : { state: host.state, until: untilOf(host), host: true };
    }
    if (ownBlocks) return { state: own.state, until: untilOf(own), host: false };
    if (hostBlocks) return { state: host.state, until: untilOf(host), host: true };
    return null;
  }

  reportSuccess(key: HostKey): void {
    const id = key.metadata.id;
    const hostId = key.spec.hostId;
    this.runs.key.clear(id, key.metadata.updatedAt);
    this.runs.host.clear(hostId);
    if (this.marks.key.has(id)) this.clearKeyMarks(id, key.metadata.updatedAt);
    // The host answered: its circuit closes, whichever of its keys was used.
    if (this.marks.host.delete(hostId)) {
      this.probes.host.delete(hostId);
      this.changed('host', hostId);
      this.broadcast('host', hostId, null);
    }
  }

  reportFailure(key: HostKey, kind: FailureKind, retryAfterMs: number | null, reason: string): void {
    const id = key.metadata.id;
    const version = key.metadata.updatedAt;
    const now = Date.now();
    if (kind === 'auth' || kind === 'rate_limit') {
      if (this.stale(id, version)) return;
      const previous = this.marks.key.get(id);
      const again = previous !== undefined && previous.keyVersion === version;
      if (kind === 'auth') {
        const failures = (again ? previous.failures : 0) + 1;
        this.setMark('key', id, { state: 'invalid', until: now + PROBE_AFTER_MS, reason, failures, keyVersion: version });
      } else {
        const failures = (again && previous.state === 'cooling' ? previous.failures : 0) + 1;
        const backoff = Math.min(BASE_BACKOFF_MS * 2 ** (failures - 1), MAX_BACKOFF_MS);
        this.setMark('key', id, { state: 'cooling', until: now + (retryAfterMs ?? backoff), reason, failures, keyVersion: version });
      }
    } else {
      this.countTowardCircuit('key', id, now, reason, version);
      this.countTowardCircuit('host', key.spec.hostId, now, reason);
    }
  }

  /**
   * Marks a key invalid on this instance only: its value cannot be had here (an unset environment
   * variable, a value sealed under another master key). That is this instance's configuration, not
   * the key's health, so it is not shared: other instances keep using the key.
   */
  reportUnusable(key: HostKey, reason: string): void {
    const id = key.metadata.id;
    // The value of the version before an edit: the version in use since may well be had here.
    if (this.stale(id, key.metadata.updatedAt)) return;
    const mark: Mark = { state: 'invalid', until: Date.now() + PROBE_AFTER_MS, reason, failures: 1, keyVersion: key.metadata.updatedAt };
    const shared = this.unusable.has(id) ? this.sharedBehind.get(id) : this.marks.key.get(id);
    this.unusable.set(id, mark);
    this.putShared('key', id, shared ?? null);
    this.changed('key', id);
  }

  /** Every host key of the snapshot with its state (for the admin API and dashboard). */
  states(snapshot: CatalogSnapshot, now = Date.now()): KeyHealthItem[] {
    const out: KeyHealthItem[] = [];
    for (const key of snapshot.hostKeys.values()) {
      if (!key.spec.enabled) {
        out.push({ hostKeyId: key.metadata.id, state: 'disabled' });
        continue;
      }
      const own = this.marks.key.get(key.metadata.id);
      const host = this.marks.host.get(key.spec.hostId);
      const ownShown = own && !(own.state === 'cooling' && now >= own.until) && sameVersion(own.keyVersion, key.metadata.updatedAt);
      if (ownShown) out.push(item(key.metadata.id, own, own.reason, now));
      else if (host) out.push(item(key.metadata.id, host, `its host's circuit: ${host.reason}`, now));
      else out.push({ hostKeyId: key.metadata.id, state: 'healthy' });
    }
    return out;
  }

  async close(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.close();
  }

  /** A 5xx, timeout or refused connection: opens the circuit after a run of them, or reopens a half-open one. version: the host key's. */
  private countTowardCircuit(scope: Scope, id: string, now: number, reason: string, version?: string): void {
    if (version !== undefined && this.stale(id, version)) return;
    const found = this.marks[scope].get(id);
    // A mark of an older version of the key is not about this one.
    const mark = found && (version === undefined || sameVersion(found.keyVersion, version)) ? found : undefined;
    const what = scope === 'key' ? 'host key' : 'host';
    if (mark?.state === 'open') {
      // A failure while open came from a request sent before it opened; only a probe's reopens it.
      if (now < mark.until) return;
      this.probes[scope].delete(id);
      this.setMark(scope, id, { state: 'open', until: now + this.breaker.openMs, reason: `the half-open probe failed: ${reason}`, failures: 0, keyVersion: version });
      this.log.warn({ [scope === 'key' ? 'hostKeyId' : 'hostId']: id, reason }, `${what} circuit reopened: the probe failed`);
      return;
    }
    if (!this.runs[scope].add(id, now, version) || mark?.state === 'invalid') return; // an invalid key is out already, until edited
    const within = Math.round(this.breaker.windowMs / 1000);
    this.setMark(scope, id, { state: 'open', until: now + this.breaker.openMs, reason: `${this.breaker.failures} failures in a row within ${within}s, the last: ${reason}`, failures: 0, keyVersion: version });
    this.log.warn({ [scope === 'key' ? 'hostKeyId' : 'hostId']: id, reason }, `${what} circuit opened after ${this.breaker.failures} failures in a row`);
  }

  /** True when the mark (if any) lets a request through now. */
  private passable(scope: Scope, id: string, key: HostKey | null, now: number): boolean {
    const mark = this.marks[scope].get(id);
    if (!mark) return true;
    if (key && !sameVersion(mark.keyVersion, key.metadata.updatedAt)) {
      // A request routed before an edit: the mark is the later version's, not about it, and stays.
      if (olderVersion(key.metadata.updatedAt, mark.keyVersion)) return true;
      this.changed(scope, id);
      // The operator edited it. A reportUnusable mark gives way to the shared one it was in front of (judged in turn).
      if (this.unusable.size > 0 && this.unusable.delete(id)) {
        const shared = this.sharedBehind.get(id);
        this.sharedBehind.delete(id);
        if (shared) {
          this.marks[scope].set(id, shared);
          return this.passable(scope, id, key, now);
        }
      }
      this.marks[scope].delete(id);
      return true;
    }
    if (now < mark.until) return false;
    return mark.state !== 'open' || !this.claimed(scope, id, now);
  }

  /** A success with `version` of the key: clears its marks about that version (a shared one, also about an older one). */
  private clearKeyMarks(id: string, version: string): void {
    const own = this.unusable.size > 0 ? this.unusable.get(id) : undefined;
    const shared = own ? this.sharedBehind.get(id) : this.marks.key.get(id);
    // Only a success with the version a reportUnusable mark is about says its value can be had here after all.
    const ownCleared = own !== undefined && own.keyVersion === version;
    // One with a version older than the mark's (a request sent before an edit) says nothing of the version in use since.
    const sharedCleared = shared !== undefined && !olderVersion(version, shared.keyVersion);
    if (!ownCleared && !sharedCleared) return;
    this.probes.key.delete(id);
    this.changed('key', id);
    if (ownCleared) {
      this.unusable.delete(id);
      this.sharedBehind.delete(id);
    }
    this.putShared('key', id, sharedCleared ? null : shared ?? null);
    if (sharedCleared) this.broadcast('key', id, null, version);
  }

  /**
   * True when `version` of the key predates the one a mark here is about (its shared mark's, or
   * unless sharedOnly its reportUnusable mark's): met by a request sent before an edit, stale.
   */
  private stale(id: string, version: string | undefined, sharedOnly = false): boolean {
    const own = this.unusable.size > 0 ? this.unusable.get(id) : undefined;
    const shared = own ? this.sharedBehind.get(id) : this.marks.key.get(id);
    return olderVersion(version, shared?.keyVersion) || (!sharedOnly && olderVersion(version, own?.keyVersion));
  }

  private claimed(scope: Scope, id: string, now: number): boolean {
    const claim = this.probes[scope].get(id);
    return claim !== undefined && now - claim.at < PROBE_CLAIM_MS;
  }

  private setMark(scope: Scope, id: string, mark: Mark): void {
    this.putShared(scope, id, mark);
    this.unshared.add(mark);
    this.changed(scope, id);
    this.broadcast(scope, id, mark);
  }

  /**
   * Sets (null: clears) the shared mark. A key's reportUnusable mark in force stays what is seen,
   * lengthened to the shared mark's end when that is later: this instance still cannot have its value.
   */
  private putShared(scope: Scope, id: string, shared: Mark | null): void {
    // No lookup while this instance holds no reportUnusable mark (the usual case).
    const own = scope === 'key' && this.unusable.size > 0 ? this.unusable.get(id) : undefined;
    if (own && own.until > Date.now()) {
      if (shared) this.sharedBehind.set(id, shared);
      else this.sharedBehind.delete(id);
      // Only a shared mark about the same version says the value is out that long.
      const longer = shared && shared.until > own.until && sameVersion(shared.keyVersion, own.keyVersion!);
      this.marks.key.set(id, longer ? { ...own, until: shared.until } : own);
      return;
    }
    if (own) {
      // Past its end a request tries the key again, and marks it anew if its value still cannot be had.
      this.unusable.delete(id);
      this.sharedBehind.delete(id);
    }
    if (shared) this.marks[scope].set(id, shared);
    else this.marks[scope].delete(id);
  }

  /** A read of the store under way must leave this mark as it is now. */
  private changed(scope: Scope, id: string): void {
    for (const changed of this.reads) changed.add(`${scope}:${id}`);
  }

  /**
   * Stores the mark for the instances that start later and tells the running ones (pub/sub), unless
   * the store holds a newer version's mark (key-health-store.ts). clearedVersion: the key's version whose success cleared it.
   */
  private broadcast(scope: Scope, id: string, mark: Mark | null, clearedVersion?: string): void {
    if (!this.shareMark) return;
    const version = mark ? mark.keyVersion : clearedVersion;
    const message = JSON.stringify({ from: this.instance, scope, id, mark, keyVersion: clearedVersion });
    const stored = mark ? { value: JSON.stringify(mark), ttlMs: mark.until - Date.now() } : undefined;
    this.shareMark({ key: `${STORE_PREFIX[scope]}${id}`, version, channel: CHANNEL, message, mark: stored }).then((shared) => {
      // Refused: the newer version's mark reaches this instance through pub/sub (or the next reload).
      if (!shared) this.log.debug({ [scope === 'key' ? 'hostKeyId' : 'hostId']: id, keyVersion: version }, 'key health not shared: Valkey holds a newer key version\'s mark');
      else if (mark) this.unshared.delete(mark);
    }, (err: Error) => {
      this.log.debug({ err: err.message }, 'could not share key health');
    });
  }

  /** A mark another instance published. */
  private received(message: string): void {
    try {
      const { from, scope = 'key', id, mark, keyVersion } = JSON.parse(message) as { from: string; scope?: Scope; id: string; mark: Mark | null; keyVersion?: string };
      if (from === this.instance || (scope !== 'key' && scope !== 'host')) return;
      // Another instance's request sent before an edit: the shared mark here is about a later version.
      if (scope === 'key' && this.stale(id, mark ? mark.keyVersion : keyVersion, true)) return;
      this.probes[scope].delete(id);
      this.changed(scope, id);
      this.putShared(scope, id, mark);
    } catch {
      /* a malformed message from another version: ignore */
    }
  }
}

function item(hostKeyId: string, mark: Mark, reason: string, now: number): KeyHealthItem {
  if (mark.state === 'open' && now >= mark.until) return { hostKeyId, state: 'half-open', reason };
  return { hostKeyId, state: mark.state, until: new Date(mark.until).toISOString(), reason };
}
