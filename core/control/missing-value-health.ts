// A host key whose value this instance cannot read (an unset environment variable, a value sealed
// under another master key) is reported invalid, reason "missing value: ...", from the moment it
// exists: not healthy until a request fails on it. This is this instance's configuration, so it
// is judged here, with the same resolution requests use, over what KeyHealth reports.
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { CredentialResolver } from '../pipeline/credentials.ts';
import type { KeyHealthItem } from '../pipeline/key-health.ts';

export const MISSING_VALUE = 'missing value';

export function missingValueHealth(credentials: Pick<CredentialResolver, 'resolve'>) {
  return (snapshot: CatalogSnapshot, items: KeyHealthItem[]): KeyHealthItem[] => items.map((item) => {
    if (item.state === 'disabled') return item;
    const key = snapshot.hostKeys.get(item.hostKeyId);
    const resolved = key ? credentials.resolve(key) : null;
    if (!resolved || !('error' in resolved)) return item;
    return { hostKeyId: item.hostKeyId, state: 'invalid', reason: `${MISSING_VALUE}: ${resolved.error}` };
  });
}
