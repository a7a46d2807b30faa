// `relay catalog export`: the catalog as a catalog file. References become slugs; host keys keep
// their environment variable's name or their value as sealed, budgets their webhook URLs and hosts
// their header values as sealed (never plaintext); relay keys are not part of it (their secret is
// shown once, at creation).
import { isSealedForm } from '../catalog/kinds.ts';
import type { CatalogStore } from '../catalog/store.ts';
import { toPublicEntity } from '../control/public-entity.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { CATALOG_FILE_VERSION, FILE_KINDS, mapReferences, type CatalogDocument, type FileEntity } from './document.ts';

/**
 * A budget's webhooks as the file holds them: sealed. A URL stored before sealing (read from a
 * stopped Relay's database) is sealed for the file; without a master key there is no way to
 * write it but in plaintext, so the export is refused.
 */
function sealedWebhooks(sealer: Sealer, slug: string, hooks: Array<{ url: string }>): Array<{ url: string }> {
  return hooks.map((hook) => {
    if (isSealedForm(hook.url)) return hook;
    if (!sealer.enabled) {
      throw new RelayError('RELAY_ERR_MASTER_KEY_MISSING', `budgets/${slug}: its alert webhook URLs are stored unsealed and a catalog file holds no plaintext secret; set RELAY_MASTER_KEY (Relay seals them at start) and export again`);
    }
    return { ...hook, url: sealer.seal(hook.url) };
  });
}

/**
 * A host's headers as the file holds them: values sealed. A value stored before sealing (read from a
 * stopped Relay's database) is sealed for the file; without a master key the export is refused.
 */
function sealedHeaders(sealer: Sealer, slug: string, headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => {
    if (isSealedForm(value)) return [name, value];
    if (!sealer.enabled) {
      throw new RelayError('RELAY_ERR_MASTER_KEY_MISSING', `hosts/${slug}: its header values are stored unsealed and a catalog file holds no plaintext secret; set RELAY_MASTER_KEY (Relay seals them at start) and export again`);
    }
    return [name, sealer.seal(value)];
  }));
}

export async function exportCatalogDocument(store: CatalogStore, sealer: Sealer): Promise<CatalogDocument> {
  const all = await store.loadAll();
  const slugOf = new Map(all.map(({ entity }) => [entity.metadata.id, entity.metadata.slug]));
  const doc: CatalogDocument = { version: CATALOG_FILE_VERSION };
  for (const kind of FILE_KINDS) {
    const items: FileEntity[] = all
      .filter((e) => e.kind === kind)
      .map(({ entity }) => {
        const { hasValue: _serverSet, ...publicSpec } = toPublicEntity(kind, entity).spec;
        const item: FileEntity = {
          slug: entity.metadata.slug,
          displayName: entity.metadata.displayName,
          spec: mapReferences(kind, publicSpec, (ref) => slugOf.get(ref.value) ?? ref.value),
        };
        if (kind === 'host-keys' && entity.sealedValue) item.sealedValue = entity.sealedValue;
        if (kind === 'budgets' && Array.isArray(item.spec.alertWebhooks)) item.spec.alertWebhooks = sealedWebhooks(sealer, entity.metadata.slug, item.spec.alertWebhooks as Array<{ url: string }>);
        if (kind === 'hosts' && item.spec.headers) item.spec.headers = sealedHeaders(sealer, entity.metadata.slug, item.spec.headers as Record<string, string>);
        return item;
      })
      // By slug: the file diffs cleanly in git whatever order the entities were created in.
      .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    if (items.length > 0) doc[kind] = items;
  }
  return doc;
}
