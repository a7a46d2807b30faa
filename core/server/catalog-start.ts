// Loads the catalog and settings at start-up, from Postgres when it answers and from the local
// snapshot (core/catalog/local-snapshot.ts) when it does not: an instance restarted during a
// database outage serves what it served before, and catches up once the database returns.
// Without a local snapshot, an unreachable database is a start-up failure naming it.
import type { Logger } from 'pino';
import { StartupError } from '../errors.ts';
import type { Database } from '../db/types.ts';
import { migrate } from '../db/migrate.ts';
import type { CatalogStore } from '../catalog/store.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import { LocalSnapshotFile } from '../catalog/local-snapshot.ts';
import type { SettingsStore } from '../settings/store.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { resealAtStartup } from '../crypto/rekey.ts';
import { sealWebhookUrlsAtStartup } from '../budgets/webhook-sealing.ts';
import { sealHostHeadersAtStartup } from '../catalog/host-header-sealing.ts';
import { ensureInitialAdmin } from '../control/admin-users.ts';
import { databaseOutage, databaseWhere } from './database-reachability.ts';

export interface CatalogStartDeps {
  db: Database;
  /** The configured Postgres URL (named by host:port in messages, never in full). */
  databaseUrl?: string;
  dataDir: string;
  store: CatalogStore;
  sync: CatalogSync;
  settings: SettingsStore;
  sealer: Sealer;
  env: Record<string, string | undefined>;
  log: Logger;
  /** First wait before retrying the database after a start from the local snapshot (tests shorten it). */
  retryMs?: number;
}

/** Wait after a settled change before saving the local snapshot: a burst of writes saves once. */
const SAVE_DEBOUNCE_MS = 200;
const MAX_RETRY_MS = 5_000;

/** Starts the catalog; resolves with the function that stops catching up and saves what is pending. */
export async function startCatalog(deps: CatalogStartDeps): Promise<() => Promise<void>> {
  if (deps.db.kind !== 'postgres') {
    await loadFromDatabase(deps, new Set());
    return async () => undefined;
  }
  const file = new LocalSnapshotFile(deps.dataDir, deps.log);
  const where = databaseWhere(deps.databaseUrl);
  const outage = await databaseOutage(deps.db, where);
  if (!outage) {
    await loadFromDatabase(deps, new Set());
    const keeper = keepSaved(file, deps);
    return keeper.stop;
  }
  const saved = await file.read();
  if (!saved) throw new StartupError(`the database at ${where} is unreachable (${outage}) and there is no local catalog snapshot in ${deps.dataDir} to start from`);
  deps.sync.seed(saved.entities);
  deps.settings.restore(saved.settings);
  deps.log.warn({ database: where, reason: outage, savedAt: saved.savedAt, entities: saved.entities.length },
    'database unreachable: serving the local catalog snapshot; catching up when the database returns');
  const keeper = keepSaved(file, deps);
  const catchUp = catchUpWhenBack(deps);
  return async () => {
    catchUp.stop();
    await keeper.stop();
  };
}

/** Each step once: a retry after a partial catch-up must not subscribe or migrate twice. */
async function loadFromDatabase(deps: CatalogStartDeps, done: Set<string>): Promise<void> {
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['migrate', () => migrate(deps.db)],
    // A rotation in progress: move every stored host-key value to the current master key.
    ['reseal', () => resealAtStartup(deps.db, deps.sealer, deps.log)],
    // Budget webhook URLs stored in plaintext (or under the previous key): sealed under the current one.
    ['seal-webhooks', () => sealWebhookUrlsAtStartup(deps.db, deps.sealer, deps.log)],
    // Host header values stored in plaintext (or under the previous key): sealed under the current one.
    ['seal-host-headers', () => sealHostHeadersAtStartup(deps.db, deps.sealer, deps.log)],
    ['catalog', () => deps.sync.start()],
    ['settings', () => deps.settings.start()],
    ['admin', () => ensureInitialAdmin(deps.db, deps.env, deps.log)],
  ];
  for (const [name, run] of steps) {
    if (done.has(name)) continue;
    await run();
    done.add(name);
  }
}

function catchUpWhenBack(deps: CatalogStartDeps): { stop(): void } {
  const done = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const attempt = async (n: number): Promise<void> => {
    timer = null;
    if (stopped) return;
    try {
      if (await databaseOutage(deps.db, databaseWhere(deps.databaseUrl))) throw new Error('still unreachable');
      await loadFromDatabase(deps, done);
      deps.log.info({ entities: Object.values(deps.sync.snapshot().counts()).reduce((a, b) => a + b, 0) }, 'database reachable again: catalog and settings caught up');
      return;
    } catch (err) {
      if (n % 10 === 0) deps.log.warn({ err: (err as Error).message }, 'database still unavailable; serving the local catalog snapshot');
    }
    if (stopped) return;
    timer = setTimeout(() => void attempt(n + 1), Math.min((deps.retryMs ?? 500) * 2 ** Math.min(n, 4), MAX_RETRY_MS));
    timer.unref();
  };
  timer = setTimeout(() => void attempt(0), deps.retryMs ?? 500);
  timer.unref();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Saves the snapshot after each change read from the database (never one seeded from the file). */
function keepSaved(file: LocalSnapshotFile, deps: CatalogStartDeps): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const save = () => {
    timer = null;
    if (deps.sync.source === 'database') void file.save(deps.sync.snapshot(), deps.settings.current());
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(save, SAVE_DEBOUNCE_MS);
    timer.unref();
  };
  deps.sync.onChange(schedule);
  deps.settings.onChange(schedule);
  save();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      // Last word on close: what this instance read from the database (a seeded one is already on disk).
      if (deps.sync.source === 'database') await file.save(deps.sync.snapshot(), deps.settings.current());
    },
  };
}
