// Loads the entities of the kinds a page refers to, for selects and for showing names.
import type { Entity, KindName } from '../api/types.ts';
import { useAsync, type AsyncState } from '../ui/use-async.ts';
import { listAll } from './catalog-api.ts';

export type References = Partial<Record<KindName, Entity[]>>;

export function useReferences(kinds: KindName[]): AsyncState<References> {
  return useAsync(async () => {
    const lists = await Promise.all(kinds.map((k) => listAll(k)));
    const out: References = {};
    kinds.forEach((k, i) => { out[k] = lists[i]; });
    return out;
  }, [kinds.join(',')]);
}

export function nameOf(refs: References | undefined, kind: KindName, id: unknown): string {
  if (typeof id !== 'string' || !id) return '—';
  const found = refs?.[kind]?.find((e) => e.metadata.id === id);
  return found ? found.metadata.displayName : id.slice(0, 8);
}
