// catalog.file: the catalog file applied at every start (GitOps), after the plugins loaded (a
// provider's adapter must be). A file that does not apply stops the start, naming the entity and
// field; during a database outage (serving the local snapshot) it is skipped with a warning. What
// it changed goes to the audit trail, a row per entity, under the file's path.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { RelayConfig } from '../config/schema.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import type { CatalogFileService } from '../catalog-file/service.ts';
import type { Database } from '../db/types.ts';
import { recordCatalogChanges } from '../control/audit-store.ts';
import { parseCatalogText } from '../catalog-file/text.ts';
import { StartupError } from '../errors.ts';

export async function applyCatalogFileAtStart(config: RelayConfig, baseDir: string, catalogFile: CatalogFileService, sync: CatalogSync, db: Database, log: Logger): Promise<void> {
  if (!config.catalog.file) return;
  const file = path.resolve(baseDir, config.catalog.file);
  if (sync.source === 'local-snapshot') {
    log.warn({ file }, 'catalog.file not applied: the database is unreachable (serving the local snapshot); it applies at the next start');
    return;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new StartupError(`catalog.file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let outcome;
  try {
    outcome = await catalogFile.apply(parseCatalogText(text, file), { prune: config.catalog.prune });
  } catch (err) {
    throw new StartupError(`catalog.file ${file}: ${(err as Error).message}`);
  }
  log.info({ file, changes: outcome.changes.length, unchanged: outcome.unchanged, kept: outcome.kept, prune: outcome.prune,
    changed: outcome.changes.map((c) => `${c.action} ${c.kind}/${c.slug}`) }, 'catalog.file applied');
  await recordCatalogChanges(db, { kind: 'catalog-file', name: file }, outcome.changes).catch((err: Error) => {
    log.warn({ file, err: { message: err.message } }, 'catalog.file applied, but the audit trail could not record its changes');
  });
}
