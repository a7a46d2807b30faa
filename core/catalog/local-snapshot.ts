// The last catalog snapshot (and settings) kept in the data directory, so an instance can start
// and serve while Postgres is down. It holds what the snapshot holds: relay keys as sha256
// hashes and host-key values sealed under the master key (never opened here), so the file is
// no more secret than a database dump. Written atomically (temporary file, fsync, rename),
// readable by the owner only.
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { KIND_NAMES, type KindName } from './kinds.ts';
import type { AnyEntity, CatalogSnapshot } from './snapshot.ts';
import type { SettingsValues } from '../settings/types.ts';

const FORMAT = 1;
export const LOCAL_SNAPSHOT_FILE = 'catalog-snapshot.json';

export interface SavedCatalog {
  savedAt: string;
  entities: Array<{ kind: KindName; entity: AnyEntity }>;
  settings: Partial<SettingsValues>;
}

export class LocalSnapshotFile {
  readonly path: string;
  private writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string, private readonly log: Logger) {
    this.path = path.join(dataDir, LOCAL_SNAPSHOT_FILE);
  }

  /** The saved catalog, or null when there is none or it cannot be read (logged). */
  async read(): Promise<SavedCatalog | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ err: (err as Error).message, file: this.path }, 'cannot read the local catalog snapshot');
      return null;
    }
    try {
      return parseSaved(JSON.parse(text));
    } catch (err) {
      this.log.warn({ err: (err as Error).message, file: this.path }, 'ignoring an unreadable local catalog snapshot');
      return null;
    }
  }

  /** Saves the snapshot; writes are serialised, and a failure is logged, never thrown. */
  save(snapshot: CatalogSnapshot, settings: Partial<SettingsValues>): Promise<void> {
    const entities: SavedCatalog['entities'] = [];
    for (const kind of KIND_NAMES) for (const entity of snapshot.byKind(kind).values()) entities.push({ kind, entity });
    const body = JSON.stringify({ format: FORMAT, savedAt: new Date().toISOString(), entities, settings });
    this.writing = this.writing.then(() => this.writeAtomically(body)).catch((err: unknown) => {
      this.log.warn({ err: (err as Error).message, file: this.path }, 'could not save the local catalog snapshot');
    });
    return this.writing;
  }

  private async writeAtomically(body: string): Promise<void> {
    await mkdir(path.dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      const file = await open(tmp, 'w', 0o600);
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }
}

function parseSaved(raw: unknown): SavedCatalog {
  const doc = raw as { format?: unknown; savedAt?: unknown; entities?: unknown; settings?: unknown };
  if (!doc || doc.format !== FORMAT) throw new Error(`unknown format ${JSON.stringify(doc?.format)}`);
  if (!Array.isArray(doc.entities)) throw new Error('entities is not a list');
  const kinds = new Set<string>(KIND_NAMES);
  for (const item of doc.entities as Array<{ kind?: unknown; entity?: { metadata?: { id?: unknown } } }>) {
    if (!item || typeof item.kind !== 'string' || !kinds.has(item.kind) || typeof item.entity?.metadata?.id !== 'string') {
      throw new Error('an entity without a known kind or an id');
    }
  }
  const settings = doc.settings && typeof doc.settings === 'object' ? doc.settings as Partial<SettingsValues> : {};
  return { savedAt: String(doc.savedAt), entities: doc.entities as SavedCatalog['entities'], settings };
}
