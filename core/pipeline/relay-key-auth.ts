// Turns a presented relay key into a principal: lookup by sha256 in the snapshot (no query,
// no comparison of secrets), then the key's state and policy. Throws 401 otherwise.
import { RelayError } from '../errors.ts';
import { hashSecret } from '../crypto/relay-keys.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Principal } from '../hooks.ts';

export function principalForRelayKey(snapshot: CatalogSnapshot, plaintext: string): Principal {
  const relayKey = snapshot.relayKeyByHash(hashSecret(plaintext));
  if (!relayKey) throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'Invalid relay key.');
  if (!relayKey.spec.enabled) throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'This relay key is disabled.');
  if (relayKey.spec.expiresAt && Date.parse(relayKey.spec.expiresAt) <= Date.now()) {
    throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'This relay key has expired.');
  }
  const policy = snapshot.policies.get(relayKey.spec.policyId);
  if (!policy) throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', "This relay key's policy no longer exists.");
  // Host-tier policies limit host keys; they grant nothing to a relay key.
  if (policy.spec.tier !== 'relay') throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', "This relay key's policy is not a relay-tier policy.");
  return { relayKey, policy };
}
