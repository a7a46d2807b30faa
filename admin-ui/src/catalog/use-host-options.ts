// The host form's vendor fields: the host options schema of the adapter its provider names.
import { api } from '../api/client.ts';
import type { KindName } from '../api/types.ts';
import { useAsync } from '../ui/use-async.ts';
import type { Field } from './fields.ts';
import { hostOptionFields, type VendorAdapterInfo } from './host-options.ts';
import type { References } from './use-references.ts';

export function useHostOptionFields(kind: KindName, spec: Record<string, unknown>, refs: References | undefined): Field[] {
  const adapters = useAsync(
    () => (kind === 'hosts' ? api.get<{ items: VendorAdapterInfo[] }>('/api/vendor-adapters') : Promise.resolve({ items: [] })),
    [kind],
  );
  if (kind !== 'hosts') return [];
  const provider = refs?.providers?.find((p) => p.metadata.id === spec.providerId);
  const adapter = adapters.data?.items.find((a) => a.id === provider?.spec.adapter);
  return hostOptionFields(adapter?.hostOptions);
}
