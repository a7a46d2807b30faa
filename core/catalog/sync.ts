// Keeps this instance's snapshot in step with Postgres: a full build at start, one entity
// re-read per NOTIFY, and a full rebuild after a lost LISTEN connection or a missed
// revision. All changes apply one at a time, in arrival order.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';
import type { KindName } from './kinds.ts';
import { applyChange, buildSnapshot, emptyTables, type AnyEntity, type CatalogSnapshot } from './snapshot.ts';
import type { CatalogStore } from './store.ts';

interface ChangeNotice {
  kind: KindName;
  id: string;
  op: 'INSERT' | 'UPDATE' | 'DELETE';
  revision: number;
}

export interface CatalogSyncOptions {
  /** How often to compare the database's revision with ours (missed-notification safety net). */
  checkIntervalMs?: number;
}

export class CatalogSync {
  private current: CatalogSnapshot = buildSnapshot(emptyTables());
  private revisionSeen = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: Array<(snapshot: CatalogSnapshot) => void> = [];
  private lastRebuildAt = 0;
  private origin: 'none' | 'database' | 'local-snapshot' = 'none';

  constructor(
    private readonly db: Database,
    private readonly store: CatalogStore,
    private readonly log: Logger,
    private readonly options: CatalogSyncOptions = {},
  ) {}

  snapshot(): CatalogSnapshot {
    return this.current;
  }

  /** Time of the last full rebuild (ms since epoch). */
  get rebuiltAt(): number {
    return this.lastRebuildAt;
  }

  /** Where the snapshot in use came from: nowhere yet, the database, or the local file (an outage at start). */
  get source(): 'none' | 'database' | 'local-snapshot' {
    return this.origin;
  }

  /** Serves a saved snapshot until the database can be read (see local-snapshot.ts). */
  seed(entities: ReadonlyArray<{ kind: KindName; entity: AnyEntity }>): void {
    const tables = emptyTables();
    for (const { kind, entity } of entities) tables[kind].set(entity.metadata.id, entity);
    this.publish(buildSnapshot(tables));
    this.origin = 'local-snapshot';
  }

  onChange(fn: (snapshot: CatalogSnapshot) => void): void {
    this.listeners.push(fn);
  }

  async start(): Promise<void> {
    await this.db.listen('relay_catalog', (payload) => this.enqueue(() => this.applyNotice(payload)), () => {
      void this.rebuild('LISTEN reconnected');
    });
    await this.rebuild('start');
    const every = this.options.checkIntervalMs ?? 15_000;
    this.timer = setInterval(() => this.enqueue(() => this.checkRevision()), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Rebuilds the snapshot from the database in full; resolves false when that failed (logged). */
  async rebuild(reason: string): Promise<boolean> {
    let rebuilt = false;
    await this.enqueue(async () => {
      const revision = await this.store.currentRevision();
      const rows = await this.store.loadAll();
      const tables = emptyTables();
      for (const { kind, entity } of rows) tables[kind].set(entity.metadata.id, entity);
      this.publish(buildSnapshot(tables));
      this.revisionSeen = Math.max(this.revisionSeen, revision);
      this.lastRebuildAt = Date.now();
      this.origin = 'database';
      rebuilt = true;
      this.log.info({ reason, entities: rows.length }, 'catalog snapshot rebuilt');
    });
    return rebuilt;
  }

  /** Re-reads one entity and applies it (or its removal) to the snapshot; resolves when done. */
  refresh(kind: KindName, id: string): Promise<void> {
    return this.enqueue(async () => {
      const loaded = await this.store.loadById(id);
      this.publish(applyChange(this.current, kind, id, loaded?.entity ?? null));
    });
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.chain.then(task).catch((err: unknown) => {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'catalog sync step failed; will retry on the next check');
    });
    this.chain = next;
    return next;
  }

  private async applyNotice(payload: string): Promise<void> {
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(payload) as ChangeNotice;
    } catch {
      this.log.warn('ignoring a malformed catalog notification');
      return;
    }
    const loaded = notice.op === 'DELETE' ? null : await this.store.loadById(notice.id);
    this.publish(applyChange(this.current, notice.kind, notice.id, loaded?.entity ?? null));
    this.revisionSeen = Math.max(this.revisionSeen, Number(notice.revision));
  }

  private async checkRevision(): Promise<void> {
    const revision = await this.store.currentRevision();
    if (revision > this.revisionSeen) {
      // Something changed that no notification told us about (or it is still in flight):
      // rebuild rather than guess. Rare, and off the hot path.
      const tables = emptyTables();
      for (const { kind, entity } of await this.store.loadAll()) tables[kind].set(entity.metadata.id, entity);
      this.publish(buildSnapshot(tables));
      this.revisionSeen = revision;
      this.lastRebuildAt = Date.now();
      this.origin = 'database';
    }
  }

  private publish(snapshot: CatalogSnapshot): void {
    this.current = snapshot;
    for (const fn of this.listeners) {
      try {
        fn(snapshot);
      } catch (err) {
        this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'catalog change listener failed');
      }
    }
  }
}
