// Key health's store in Valkey is version-guarded like its memory (key-version.ts): an instance that
// has not yet heard of a newer version's mark (pub/sub delay) neither deletes that mark from the
// store nor overwrites it with an older version's, so an instance that loads the store later still
// sees it. Real Redis; three KeyHealth instances, each on its own client.
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { HostKey } from '../../core/catalog/kinds.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';

const OLD = '2026-01-01T00:00:00.000Z';
const NEW = '2026-01-01T00:05:00.000Z';
const log = pino({ level: 'silent' });

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(1_000) });
const aheadClient = direct.duplicate();
const behindClient = direct.duplicate();
await Promise.all([waitForValkey(direct), waitForValkey(aheadClient), waitForValkey(behindClient)]);
const ahead = new KeyHealth({ redis: aheadClient, log });
const behind = new KeyHealth({ redis: behindClient, log });
// Deaf from the start (its subscriber closed, its client still writing): it never hears the newer mark.
await behind.close();
const marked: string[] = [];
t.teardown(async () => {
  await ahead.close();
  if (marked.length > 0) await direct.del(...marked.map((id) => `relay:key-health:mark:${id}`));
  direct.disconnect();
  aheadClient.disconnect();
  behindClient.disconnect();
});

let n = 0;
/** One host key in its two versions: before and after an operator's edit. */
function editedKey(): { old: HostKey; current: HostKey } {
  const id = `00000000-0000-4000-b000-${process.pid.toString().padStart(6, '0')}${String(++n).padStart(6, '0')}`;
  marked.push(id);
  const version = (updatedAt: string) => ({ metadata: { id, updatedAt }, spec: { enabled: true, hostId: `host-${id}` } }) as unknown as HostKey;
  return { old: version(OLD), current: version(NEW) };
}

/** What the store holds for the key (its state and version), or null. */
async function stored(key: HostKey): Promise<{ state: string; keyVersion?: string } | null> {
  const value = await direct.get(`relay:key-health:mark:${key.metadata.id}`);
  return value ? (JSON.parse(value) as { state: string; keyVersion?: string }) : null;
}

/** Until Valkey has run what the instance sent so far (one connection answers in order). */
const landed = (client: Redis) => client.ping();

/** How an instance started now sees the key, from the store alone. */
async function seenByNewInstance(key: HostKey): Promise<string> {
  const client = direct.duplicate();
  await waitForValkey(client);
  const fresh = new KeyHealth({ redis: client, log });
  try {
    await fresh.loadShared();
    return fresh.states({ hostKeys: new Map([[key.metadata.id, key]]) } as never)[0]!.state;
  } finally {
    await fresh.close();
    client.disconnect();
  }
}

/** The instance behind rate-limited on the old version; then the one ahead marks the new version invalid (store: the new one's). */
async function markedAcrossAnEdit(t: Pick<typeof import('tap').default, 'match'>, old: HostKey, current: HostKey): Promise<void> {
  behind.reportFailure(old, 'rate_limit', 60_000, 'test: rate limited');
  await landed(behindClient);
  t.match(await stored(current), { state: 'cooling', keyVersion: OLD }, 'the old version\'s mark is stored');
  ahead.reportFailure(current, 'auth', null, 'upstream answered 401');
  await landed(aheadClient);
  t.match(await stored(current), { state: 'invalid', keyVersion: NEW }, 'the new version\'s mark replaces it in the store');
}

t.test('a success with the old version elsewhere does not delete the new version\'s stored mark', async (t) => {
  const { old, current } = editedKey();
  await markedAcrossAnEdit(t, old, current);
  behind.reportSuccess(old);
  await landed(behindClient);
  t.match(await stored(current), { state: 'invalid', keyVersion: NEW }, 'the store still holds the new version\'s mark');
  t.equal(await seenByNewInstance(current), 'invalid', 'an instance started now sees it');
  t.notOk(ahead.isAvailable(current), 'and the instance that marked it keeps it');
});

t.test('a mark of the old version elsewhere does not overwrite the new version\'s stored mark', async (t) => {
  const { old, current } = editedKey();
  ahead.reportFailure(current, 'auth', null, 'upstream answered 401');
  await landed(aheadClient);
  behind.reportFailure(old, 'rate_limit', 60_000, 'test: rate limited');
  await landed(behindClient);
  t.match(await stored(current), { state: 'invalid', keyVersion: NEW }, 'the store still holds the new version\'s mark');
  t.equal(await seenByNewInstance(current), 'invalid', 'an instance started now sees it');
  t.notOk(ahead.isAvailable(current), 'and the instance that marked it keeps it');
});

t.test('a success with the new version elsewhere deletes its stored mark', async (t) => {
  const { old, current } = editedKey();
  await markedAcrossAnEdit(t, old, current);
  behind.reportSuccess(current);
  await landed(behindClient);
  t.equal(await stored(current), null, 'the store no longer holds it');
  t.equal(await seenByNewInstance(current), 'healthy', 'an instance started now sees the key healthy');
});
