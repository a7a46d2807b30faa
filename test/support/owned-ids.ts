// Helpers for the tests of the ownership ledger (responses_forwarded_owners): a second relay key
// beside a seeded route's, a key of another policy, and whose an id was recorded as.
import type { Seeded, TestRelay } from '../../core/testing.ts';
import { settled } from './relay-client.ts';

/** Another relay key of the seeded route's policy (its plaintext), once the snapshot has it and the route's host key. */
export async function keyOfSamePolicy(relay: TestRelay, seeded: Seeded): Promise<string> {
  const made = (await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'key B' }, spec: { policyId: seeded.policyId } })).body as { plaintext: string; relayKey: { metadata: { id: string } } };
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.relayKeys.has(made.relayKey.metadata.id) && s.hostKeysOfHost(seeded.hostId).length > 0);
  return made.plaintext;
}

/** A relay key of a new policy granting every model. */
export async function keyOfOtherPolicy(relay: TestRelay): Promise<string> {
  const policy = (await relay.api('POST', '/api/policies', { metadata: { displayName: 'other policy' }, spec: { tier: 'relay', modelIds: '*' } })).body as { metadata: { id: string } };
  const made = (await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'outsider' }, spec: { policyId: policy.metadata.id } })).body as { plaintext: string; relayKey: { metadata: { id: string } } };
  await settled(relay, (s) => s.relayKeys.has(made.relayKey.metadata.id));
  return made.plaintext;
}

/** The owner `id` is recorded under (written after the answer's last byte, so waited for up to 2 s), or null. */
export async function ownerOf(relay: TestRelay, id: string): Promise<string | null> {
  for (let i = 0; i < 100; i++) {
    const rows = (await relay.relay.db.query<{ owner: string }>('SELECT owner FROM responses_forwarded_owners WHERE id = $1', [id])).rows;
    if (rows.length > 0) return rows[0]!.owner;
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}
