// Key health's marks are about one version of a host key (key-version.ts), across instances too: a
// mark or a clear another instance publishes or stores for a version older than the one this
// instance's mark is about (its request was sent before an edit) leaves that mark as it is; so does a
// request here still routed with the old version, when it asks whether the key may be tried, and
// its success, for the new version's run of failures toward the circuit. Two KeyHealth instances
// on the real Redis; keys as the catalog gives them (updatedAt is the version).
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { HostKey } from '../../core/catalog/kinds.ts';
import { eventually } from '../../core/testing.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';

const BOUND_MS = 10_000;
const OLD = '2026-01-01T00:00:00.000Z';
const NEW = '2026-01-01T00:05:00.000Z';
const BREAKER = { failures: 2, windowMs: 60_000, openMs: 60_000 };

const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(1_000) });
const other = direct.duplicate();
await Promise.all([waitForValkey(direct), waitForValkey(other)]);
const here = new KeyHealth({ redis: direct, log: pino({ level: 'silent' }), breaker: BREAKER });
const there = new KeyHealth({ redis: other, log: pino({ level: 'silent' }), breaker: BREAKER });
const marked: string[] = [];
t.teardown(async () => {
  await here.close();
  await there.close();
  if (marked.length > 0) await direct.del(...marked.map((id) => `relay:key-health:mark:${id}`));
  direct.disconnect();
  other.disconnect();
});

let n = 0;
/** One host key in its two versions: before and after an operator's edit. */
function editedKey(): { old: HostKey; current: HostKey } {
  const id = `00000000-0000-4000-a000-${process.pid.toString().padStart(6, '0')}${String(++n).padStart(6, '0')}`;
  marked.push(id);
  const version = (updatedAt: string) => ({ metadata: { id, updatedAt }, spec: { enabled: true, hostId: `host-${id}` } }) as unknown as HostKey;
  return { old: version(OLD), current: version(NEW) };
}

/** What `here` has heard from `there` so far: `there` marks another key after, and one channel keeps the order. */
async function heard(): Promise<void> {
  const sentinel = editedKey().current;
  await eventually(() => {
    if (!here.isAvailable(sentinel)) return true;
    there.reportFailure(sentinel, 'rate_limit', 60_000, 'test: sentinel');
    return false;
  }, BOUND_MS, 50);
}

// `here` listens before the first test: a message published before its subscriber is subscribed is lost.
await heard();

t.test('a request still routed with the old version leaves the new version\'s mark in force', async (t) => {
  const { old, current } = editedKey();
  here.reportFailure(current, 'auth', null, 'upstream answered 401');
  t.ok(here.isAvailable(old), 'the new version\'s mark is not about the old one');
  t.notOk(here.isAvailable(current), 'and the new version stays out');
});

/** Publishes as another instance would that has not heard of the new version's mark: its request with the old one met `mark` (null: a success). */
async function publishOld(id: string, mark: object | null): Promise<void> {
  await direct.publish('relay:key-health', JSON.stringify({ from: 'behind', scope: 'key', id, mark, keyVersion: mark ? undefined : OLD }));
}

t.test('a clear published elsewhere for the old version leaves the new version\'s mark', async (t) => {
  const { current } = editedKey();
  here.reportFailure(current, 'auth', null, 'upstream answered 401');
  await publishOld(current.metadata.id, null);
  await heard();
  t.notOk(here.isAvailable(current), 'the new version stays out here');
});

t.test('a mark published elsewhere for the old version does not replace the new version\'s', async (t) => {
  const { current } = editedKey();
  here.reportFailure(current, 'rate_limit', 60_000, 'test: rate limited');
  const shown = () => here.states({ hostKeys: new Map([[current.metadata.id, current]]) } as never)[0]!;
  const before = shown();
  await publishOld(current.metadata.id, { state: 'invalid', until: Date.now() + 300_000, reason: 'upstream answered 401', failures: 1, keyVersion: OLD });
  await heard();
  t.same(shown(), before, 'the new version\'s rate limit is what is shown, as it was');
  t.notOk(here.isAvailable(current), 'and it stays out');
});

t.test('a mark stored for the old version, read back, does not replace the new version\'s', async (t) => {
  const { current } = editedKey();
  here.reportFailure(current, 'rate_limit', 60_000, 'test: rate limited');
  await direct.set(`relay:key-health:mark:${current.metadata.id}`, JSON.stringify({ state: 'invalid', until: Date.now() + 300_000, reason: 'old', failures: 1, keyVersion: OLD }), 'PX', 300_000);
  await here.loadShared();
  const item = here.states({ hostKeys: new Map([[current.metadata.id, current]]) } as never)[0]!;
  t.equal(item.state, 'cooling', 'the new version\'s mark is kept');
  t.notOk(here.isAvailable(current), 'and it stays out');
});

t.test('a success with the old version does not end the new version\'s run of failures', async (t) => {
  const { old, current } = editedKey();
  here.reportFailure(current, 'server', null, 'upstream answered 500');
  here.reportSuccess(old);
  here.reportFailure(current, 'server', null, 'upstream answered 500');
  t.notOk(here.isAvailable(current), 'two failures of the new version in a row open its circuit');
  t.ok(here.isAvailable(old), 'which is not about the old version');
});
