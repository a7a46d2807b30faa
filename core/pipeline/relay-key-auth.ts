// Turns a presented relay key into a principal: lookup by sha256 in the snapshot (no query,
// no comparison of secrets), then the key's state and policy. Throws 401 otherwise; a key Relay
// knows but refuses (disabled, expired, its policy gone or not relay-tier) throws RefusedRelayKey,
// so that the request's record still names the key and its policy.
import { RelayError } from '../errors.ts';
import { hashSecret } from '../crypto/relay-keys.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { RelayKey } from '../catalog/kinds.ts';
import type { Principal } from '../hooks.ts';

/** A 401 for a relay key in the catalog that may not be used; carries the key for the usage event. */
export class RefusedRelayKey extends RelayError {
  declare readonly relayKey: RelayKey;

  constructor(relayKey: RelayKey, message: string) {
    super('RELAY_ERR_RELAY_KEY_INVALID', message);
    // Not enumerable: error serializers (pino's) copy enumerable members into log lines.
    Object.defineProperty(this, 'relayKey', { value: relayKey, enumerable: false });
  }
}

/** The known key an authentication error refused, if it was one. */
export function refusedRelayKeyOf(err: unknown): RelayKey | null {
  return err instanceof RefusedRelayKey ? err.relayKey : null;
}

export function principalForRelayKey(snapshot: CatalogSnapshot, plaintext: string): Principal {
  const relayKey = snapshot.relayKeyByHash(hashSecret(plaintext));
  if (!relayKey) throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'Invalid relay key.');
  if (!relayKey.spec.enabled) throw new RefusedRelayKey(relayKey, 'This relay key is disabled.');
  if (relayKey.spec.expiresAt && Date.parse(relayKey.spec.expiresAt) <= Date.now()) {
    throw new RefusedRelayKey(relayKey, 'This relay key has expired.');
  }
  const policy = snapshot.policies.get(relayKey.spec.policyId);
  if (!policy) throw new RefusedRelayKey(relayKey, "This relay key's policy no longer exists.");
  // Host-tier policies limit host keys; they grant nothing to a relay key.
  if (policy.spec.tier !== 'relay') throw new RefusedRelayKey(relayKey, "This relay key's policy is not a relay-tier policy.");
  return { relayKey, policy };
}
