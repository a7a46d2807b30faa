// A key this instance cannot use (reportUnusable: its value cannot be had here) stays out here
// whatever the shared marks say: one heard on the channel or read back from Valkey's store may make
// it last longer, but its end, a clear from another instance (its success) or its absence from the
// store leaves the local mark in force. So does a success here with another version of the key (a
// request sent before the key was edited), and a rate limit such a request met.
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { HostKey } from '../../core/catalog/kinds.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';
import { eventually } from '../../core/testing.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';

const BOUND_MS = 10_000;
const VERSION = '2026-01-01T00:00:00.000Z';
const UNUSABLE = 'test: its stored value cannot be opened here';

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(1_000) });
const here = new KeyHealth({ redis: direct, log: pino({ level: 'silent' }) });
const other = direct.duplicate();
const there = new KeyHealth({ redis: other, log: pino({ level: 'silent' }) });
// Relay's clients have no offline queue: a command before the connection is up fails at once.
await Promise.all([waitForValkey(direct), waitForValkey(other)]);
const marked: string[] = [];
t.teardown(async () => {
  await here.close();
  await there.close();
  if (marked.length > 0) await direct.del(...marked.map((id) => `relay:key-health:mark:${id}`));
  direct.disconnect();
  other.disconnect();
});

let n = 0;
function newKey(version = VERSION): HostKey {
  const id = `00000000-0000-4000-9000-${process.pid.toString().padStart(6, '0')}${String(++n).padStart(6, '0')}`;
  marked.push(id);
  return { metadata: { id, updatedAt: version }, spec: { enabled: true, hostId: `host-${id}` } } as unknown as HostKey;
}
const withVersion = (key: HostKey, updatedAt: string) => ({ ...key, metadata: { ...key.metadata, updatedAt } }) as HostKey;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What `here` has heard from `there` so far: `there` marks another key after, and one channel keeps the order. */
async function heard(): Promise<void> {
  const sentinel = newKey();
  // Published again until heard: the first may go before `here`'s subscriber has subscribed.
  await eventually(() => {
    if (!here.isAvailable(sentinel)) return true;
    there.reportFailure(sentinel, 'rate_limit', 60_000, 'test: sentinel');
    return false;
  }, BOUND_MS, 50);
}
/** The key's state as the admin API shows it on `here`. */
function shown(key: HostKey): { state: string; reason?: string; until?: number } {
  const item = here.states({ hostKeys: new Map([[key.metadata.id, key]]) } as unknown as CatalogSnapshot)[0]!;
  return { state: item.state, reason: item.reason, until: item.until ? Date.parse(item.until) : undefined };
}
/** Stores a mark the way another instance would, without publishing it (so only a read of the store finds it). */
async function storeElsewhere(key: HostKey, ms: number): Promise<void> {
  const mark = { state: 'cooling', until: Date.now() + ms, reason: 'test: rate limited elsewhere', failures: 1 };
  await direct.set(`relay:key-health:mark:${key.metadata.id}`, JSON.stringify(mark), 'PX', ms);
}

t.test('a shared mark heard on the channel neither replaces nor clears the local one', async (t) => {
  const cleared = newKey();
  here.reportUnusable(cleared, UNUSABLE);
  there.reportFailure(cleared, 'rate_limit', 60_000, 'test: rate limited elsewhere');
  await heard();
  const during = shown(cleared);
  t.match(during, { state: 'invalid', reason: UNUSABLE }, `the local reason is still what is shown (${JSON.stringify(during)})`);
  there.reportSuccess(cleared);
  await heard();
  t.notOk(here.isAvailable(cleared), 'the other instance clearing its mark leaves the local one in force');

  const expired = newKey();
  here.reportUnusable(expired, UNUSABLE);
  there.reportFailure(expired, 'rate_limit', 300, 'test: rate limited elsewhere');
  await heard();
  await sleep(400);
  t.notOk(here.isAvailable(expired), 'a shared mark ending before it does not end it');

  const longer = newKey();
  here.reportUnusable(longer, UNUSABLE);
  const sharedUntil = Date.now() + 10 * 60_000;
  there.reportFailure(longer, 'rate_limit', 10 * 60_000, 'test: rate limited elsewhere');
  await heard();
  const lengthened = shown(longer);
  t.ok(lengthened.state === 'invalid' && lengthened.reason === UNUSABLE && lengthened.until! >= sharedUntil - 1_000,
    `a shared mark ending later makes it last as long, with the local reason (${JSON.stringify(lengthened)})`);
  there.reportSuccess(longer);
  await heard();
  const back = shown(longer);
  t.ok(back.state === 'invalid' && back.until! < Date.now() + 6 * 60_000, `once that one is cleared, the local one is back as it was (${JSON.stringify(back)})`);
});

t.test('a clear heard after the local mark replaced a shared one does not clear it', async (t) => {
  const key = newKey();
  there.reportFailure(key, 'rate_limit', 60_000, 'test: rate limited elsewhere');
  await eventually(() => !here.isAvailable(key), BOUND_MS, 10);
  here.reportUnusable(key, UNUSABLE);
  there.reportSuccess(key);
  await heard();
  t.notOk(here.isAvailable(key), 'still out here');
});

t.test('reading the store back (as once the subscriber is back) neither replaces nor drops the local mark', async (t) => {
  const key = newKey();
  here.reportUnusable(key, UNUSABLE);
  await storeElsewhere(key, 60_000);
  await here.loadShared();
  const during = shown(key);
  t.match(during, { state: 'invalid', reason: UNUSABLE }, `a stored mark read back leaves the local reason shown (${JSON.stringify(during)})`);
  await direct.del(`relay:key-health:mark:${key.metadata.id}`);
  await here.loadShared();
  t.notOk(here.isAvailable(key), 'a mark gone from the store (cleared elsewhere) leaves the local one in force');

  const expired = newKey();
  here.reportUnusable(expired, UNUSABLE);
  await storeElsewhere(expired, 300);
  await here.loadShared();
  await sleep(400);
  t.notOk(here.isAvailable(expired), 'a stored mark ending before it does not end it');
});

t.test('what a request with another version of the key met here leaves the local mark in force', async (t) => {
  // The key was edited: a request sent with the old version is still going when the new one's value fails to open.
  const succeeded = newKey('2026-02-02T00:00:00.000Z');
  here.reportUnusable(succeeded, UNUSABLE);
  here.reportSuccess(withVersion(succeeded, VERSION));
  t.notOk(here.isAvailable(succeeded), 'its success says nothing of the new version\'s value');

  const limited = newKey();
  here.reportUnusable(limited, UNUSABLE);
  here.reportFailure(limited, 'rate_limit', 300, 'test: rate limited');
  await sleep(400);
  t.notOk(here.isAvailable(limited), 'the rate limit it met, once over, does not end it');
});
