// The lock on an embedded database's directory: PGlite is one process's database, and a second
// process opening the same directory sees only its own writes (and loses them, or corrupts the
// files). proper-lockfile: an atomic mkdir beside the directory, kept fresh by its holder, so a
// lock left by a killed process goes stale by age, across hosts on a shared volume and without
// trusting a pid (Relay is pid 1 in every container).
import { stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { StartupError } from '../errors.ts';

/** A lock its holder stopped refreshing (killed) is free after this long; the holder refreshes it every half of it. */
export const LOCK_STALE_MS = 10_000;
/** How often a start that finds the lock taken looks again. */
const LOOK_AGAIN_MS = 500;

/** The directory proper-lockfile makes (the lock itself) for an embedded database directory. */
export function lockPath(dir: string): string {
  return `${dir}.lock`;
}

/** Another live process (a Relay, or a relay CLI command) holds the embedded database's directory. */
export class EmbeddedDatabaseInUseError extends StartupError {
  constructor(readonly dir: string) {
    super(`the embedded database ${dir} is in use by another Relay (or relay CLI command): stop it, `
      + 'give this one another RELAY_DATA_DIR, or set DATABASE_URL so that both share one Postgres');
    this.name = 'EmbeddedDatabaseInUseError';
  }
}

export interface LockEvents {
  /** The lock is taken and not yet stale: this process waits to learn whether its holder lives. */
  onWait?(): void;
  /** The lock was lost while held (its directory removed, refreshes failing): another process may now open the directory. */
  onLost(err: Error): void;
}

/**
 * Takes the lock on `dir`; resolves with its release. A taken lock whose mtime moves (its holder
 * refreshes it) fails at once with EmbeddedDatabaseInUseError; one that stays still is waited on
 * until proper-lockfile finds it stale, so a container restarted after a crash comes up.
 */
export async function lockEmbeddedDir(dir: string, events: LockEvents): Promise<() => Promise<void>> {
  const options = { stale: LOCK_STALE_MS, realpath: false, onCompromised: events.onLost };
  // Bounds the wait when the holder's clock is ahead of ours (a shared volume): its lock looks fresh longer.
  const deadline = Date.now() + 2 * LOCK_STALE_MS;
  let firstMtime: number | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      return await lockfile.lock(dir, options);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    if (attempt === 0) events.onWait?.();
    const mtime = await stat(lockPath(dir)).then((s) => s.mtimeMs, () => null);
    firstMtime ??= mtime;
    if ((mtime !== null && mtime !== firstMtime) || Date.now() > deadline) throw new EmbeddedDatabaseInUseError(dir);
    await sleep(LOOK_AGAIN_MS);
  }
}

/** Whether a live process (one that refreshed it within the stale period) holds the lock on `dir`. */
export function embeddedDirLocked(dir: string): Promise<boolean> {
  return lockfile.check(dir, { stale: LOCK_STALE_MS, realpath: false });
}
