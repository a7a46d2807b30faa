// `relay catalog export`: the catalog as a catalog file. References become slugs; host keys keep
// their environment variable's name or their value as sealed (never plaintext); relay keys are
// not part of it (their secret is shown once, at creation).
import type { CatalogStore } from '../catalog/store.ts';
import { toPublicEntity } from '../control/public-entity.ts';
import { CATALOG_FILE_VERSION, FILE_KINDS, mapReferences, type CatalogDocument, type FileEntity } from './document.ts';

export async function exportCatalogDocument(store: CatalogStore): Promise<CatalogDocument> {
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
        return item;
      })
      // By slug: the file diffs cleanly in git whatever order the entities were created in.
      .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    if (items.length > 0) doc[kind] = items;
  }
  return doc;
}
