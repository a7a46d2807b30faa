// The version guard of key health's store (key-health-store.ts) on the real Redis: a change is
// stored and published unless the stored mark is of a newer key version (by updatedAt, to the
// millisecond); a stored mark without a version, or one that is not JSON, guards nothing.
import t from 'tap';
import { Redis } from 'ioredis';
import { eventually } from '../../core/testing.ts';
import { defineShareMark } from '../../core/pipeline/key-health-store.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';

const OLD = '2026-01-01T00:00:00.000Z';
const NEW = '2026-01-01T00:00:00.001Z';
const CHANNEL = `relay:key-health-store-test:${process.pid}`;

const redis = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(1_000) });
const listener = redis.duplicate();
await Promise.all([waitForValkey(redis), waitForValkey(listener)]);
const heard: string[] = [];
listener.on('message', (_channel: string, message: string) => heard.push(message));
await listener.subscribe(CHANNEL);
const shareMark = defineShareMark(redis);
const keys: string[] = [];
t.teardown(async () => {
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  listener.disconnect();
});

let n = 0;
function storeKey(): string {
  const key = `relay:key-health-store-test:${process.pid}:${++n}`;
  keys.push(key);
  return key;
}

const mark = (keyVersion?: string) => ({ value: JSON.stringify({ state: 'invalid', until: Date.now() + 60_000, keyVersion }), ttlMs: 60_000 });
const versionIn = async (key: string) => (JSON.parse((await redis.get(key)) ?? 'null') as { keyVersion?: string } | null)?.keyVersion;
/** Everything published so far has reached the listener (a round trip after the publications). */
async function published(): Promise<void> {
  await redis.publish(CHANNEL, 'sync');
  await eventually(() => heard.includes('sync'));
  heard.splice(heard.indexOf('sync'), 1);
}

t.test('a mark a millisecond older neither replaces nor clears the stored one, and is not published', async (t) => {
  const key = storeKey();
  t.equal(await shareMark({ key, version: NEW, channel: CHANNEL, message: 'new', mark: mark(NEW) }), true);
  t.equal(await shareMark({ key, version: OLD, channel: CHANNEL, message: 'old mark', mark: mark(OLD) }), false, 'an older mark is refused');
  t.equal(await shareMark({ key, version: OLD, channel: CHANNEL, message: 'old clear' }), false, 'an older clear is refused');
  t.equal(await versionIn(key), NEW, 'the newer mark stays stored');
  await published();
  t.same(heard.splice(0), ['new'], 'only the stored change was published');
});

t.test('a mark of the same or a newer version replaces the stored one; a clear deletes it', async (t) => {
  const key = storeKey();
  await shareMark({ key, version: OLD, channel: CHANNEL, message: 'old', mark: mark(OLD) });
  t.equal(await shareMark({ key, version: OLD, channel: CHANNEL, message: 'old again', mark: mark(OLD) }), true, 'the same version');
  t.equal(await shareMark({ key, version: NEW, channel: CHANNEL, message: 'new', mark: mark(NEW) }), true, 'a newer version');
  t.equal(await versionIn(key), NEW);
  t.equal(await shareMark({ key, version: NEW, channel: CHANNEL, message: 'cleared' }), true, 'a clear of the same version');
  t.equal(await redis.exists(key), 0, 'deleted');
  await published();
  t.same(heard.splice(0), ['old', 'old again', 'new', 'cleared']);
});

t.test('a stored mark without a version, or not JSON, is replaced; a writer without a version always writes', async (t) => {
  const unversioned = storeKey();
  await redis.set(unversioned, JSON.stringify({ state: 'invalid', until: Date.now() + 60_000 }), 'PX', 60_000);
  t.equal(await shareMark({ key: unversioned, version: OLD, channel: CHANNEL, message: 'a', mark: mark(OLD) }), true, 'over a mark of every version');
  const garbled = storeKey();
  await redis.set(garbled, 'not json', 'PX', 60_000);
  t.equal(await shareMark({ key: garbled, version: OLD, channel: CHANNEL, message: 'b', mark: mark(OLD) }), true, 'over a value that is not JSON');
  t.equal(await versionIn(garbled), OLD);
  t.equal(await shareMark({ key: garbled, version: undefined, channel: CHANNEL, message: 'c' }), true, 'a host\'s clear (no version)');
  t.equal(await redis.exists(garbled), 0);
  await published();
  heard.splice(0);
});

t.test('the stored mark lives its TTL', async (t) => {
  const key = storeKey();
  await shareMark({ key, version: OLD, channel: CHANNEL, message: 'ttl', mark: { ...mark(OLD), ttlMs: 30_000 } });
  const ttl = await redis.pttl(key);
  t.ok(ttl > 25_000 && ttl <= 30_000, `PTTL ${ttl}`);
  await published();
  heard.splice(0);
});
