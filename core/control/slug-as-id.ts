// Usage and log filters take catalog ids. A slug given instead matches nothing, an empty 200 that
// reads as "no usage": refused, naming the id it stands for. An id the catalog no longer has (a
// deleted model) still filters its history, so only a value that is some entity's slug is refused.
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { KindName } from '../catalog/kinds.ts';
import { echoedName } from '../echoed-name.ts';
import { RelayError } from '../errors.ts';
import type { UsageFilter } from '../observer/types.ts';

const FILTERED: ReadonlyArray<[keyof UsageFilter & ('modelId' | 'policyId' | 'relayKeyId'), KindName]> = [
  ['modelId', 'models'], ['policyId', 'policies'], ['relayKeyId', 'relay-keys'],
];

export function refuseSlugAsId(filter: Pick<UsageFilter, 'modelId' | 'policyId' | 'relayKeyId'>, snapshot: CatalogSnapshot): void {
  for (const [param, kind] of FILTERED) {
    const value = filter[param];
    if (value === undefined) continue;
    const entities = snapshot.byKind(kind);
    if (entities.has(value)) continue;
    for (const entity of entities.values()) {
      if (entity.metadata.slug !== value) continue;
      throw new RelayError('RELAY_ERR_BAD_REQUEST', `${param} takes an id, and ${JSON.stringify(echoedName(value))} is a slug: use ${entity.metadata.id}`, { field: param });
    }
  }
}
