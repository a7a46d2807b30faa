// Concurrency slots are leases per request: a slot whose holder is gone (an instance killed
// mid-request) frees itself one TTL later even while the key stays busy, and a request held past
// the TTL (a long stream) keeps its slot, its lease renewed by its instance; during a rolling
// upgrade, the slots older instances count in their counter count too. Two limiters on their own
// connections to the real Redis are two instances.
import t, { type Test } from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import { createRateLimiter, type Permit, type RateLimiter } from '../../core/pipeline/rate-limit.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';
import type { Principal } from '../../core/hooks.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';

const log = pino({ level: 'silent' });
const TTL_MS = 600;
// A deadline a loaded machine's Redis meets: a command past it fails open, admitting what the test expects refused.
const DEADLINE_MS = 5_000;
// DB 0: no test flushes it (keys here are unique and expire with their leases).
const REDIS_URL = 'redis://127.0.0.1:6379/0';

let seq = 0;
function fixture(concurrentRequests: number): { principal: Principal; snapshot: CatalogSnapshot; base: string } {
  const limitId = `lease-${process.pid}-${Date.now()}-${++seq}`;
  const limit = { metadata: { id: limitId }, spec: { concurrentRequests } };
  const principal = { relayKey: { metadata: { id: `key-${seq}` } }, policy: { spec: { rateLimitIds: [limitId] } } } as unknown as Principal;
  const snapshot = { rateLimits: new Map([[limitId, limit]]) } as unknown as CatalogSnapshot;
  return { principal, snapshot, base: `relay:rl:key-${seq}:${limitId}` };
}

/** A permit, or null when the limit refused the request. */
async function acquire(limiter: RateLimiter, f: { principal: Principal; snapshot: CatalogSnapshot }): Promise<Permit | null> {
  try {
    return await limiter.acquire(f.principal, f.snapshot)!;
  } catch (err) {
    if ((err as { code?: string }).code === 'RELAY_ERR_RATE_LIMITED') return null;
    throw err;
  }
}

/** An instance: a limiter on its own connection. */
async function instance(t: Test, redis: Redis | null): Promise<RateLimiter> {
  if (redis) {
    t.teardown(() => { redis.disconnect(); });
    await waitForValkey(redis);
  }
  const limiter = createRateLimiter({ redis, log, concurrencySlotTtlMs: TTL_MS, valkeyCommandTimeoutMs: DEADLINE_MS });
  t.teardown(() => limiter.close?.());
  return limiter;
}

t.test('a slot held by an instance that died frees itself after its TTL, while the key stays busy', async (t) => {
  const f = fixture(1);
  const dying = new Redis(REDIS_URL);
  const a = await instance(t, dying);
  const b = await instance(t, new Redis(REDIS_URL));
  t.ok(await acquire(a, f), 'instance A takes the only slot');
  t.equal(await acquire(b, f), null, 'instance B is refused: the slot is shared');
  // A is killed mid-request: it never gives the slot back, nor renews it.
  a.close?.();
  dying.disconnect();
  // B keeps taking and giving slots on the same key, every fifth of a TTL, until one is admitted.
  await eventually(async () => {
    const permit = await acquire(b, f);
    permit?.release(0);
    return permit !== null;
  }, TTL_MS * 20, TTL_MS / 5);
  t.pass('the dead holder\'s slot is free again');
  const held = await acquire(b, f);
  t.ok(held, 'B holds the slot');
  t.equal(await acquire(b, f), null, 'and the limit is one again, not more');
  held?.release(0);
});

for (const store of [{ name: 'memory', redis: () => null }, { name: 'redis', redis: () => new Redis(REDIS_URL) }]) {
  t.test(`${store.name}: a request held past the slot TTL keeps its slot`, async (t) => {
    const f = fixture(1);
    const limiter = await instance(t, store.redis());
    const long = await acquire(limiter, f);
    t.ok(long, 'the long request holds the only slot');
    // Time passing is what is tested: three lifetimes of a lease nobody renews.
    await new Promise((r) => setTimeout(r, TTL_MS * 3));
    t.equal(await acquire(limiter, f), null, 'a second request is still refused');
    long?.release(0);
    const next = await acquire(limiter, f);
    t.ok(next, 'once it ends, the slot is free');
    next?.release(0);
  });
}

t.test('once the limiter is closed (shutdown), the slots it still holds are no longer renewed', async (t) => {
  const f = fixture(1);
  const limiter = await instance(t, null);
  t.ok(await acquire(limiter, f), 'a request holds the only slot');
  limiter.close();
  await eventually(async () => {
    const permit = await acquire(limiter, f);
    permit?.release(0);
    return permit !== null;
  }, TTL_MS * 20, TTL_MS / 5);
  t.pass('its lease expired');
});

t.test('during a rolling upgrade, the slots older instances count in their counter count here too', async (t) => {
  const f = fixture(3);
  const redis = new Redis(REDIS_URL);
  const limiter = await instance(t, redis);
  const older = new Redis(REDIS_URL);
  t.teardown(async () => { await older.del(`${f.base}:conc`); older.disconnect(); });
  await waitForValkey(older);
  // Two requests in flight on an older instance: its INCR of the counter, with the TTL it gave it.
  await older.multi().incr(`${f.base}:conc`).incr(`${f.base}:conc`).pexpire(`${f.base}:conc`, 60_000).exec();
  const permit = await acquire(limiter, f);
  t.ok(permit, 'a third request is admitted');
  t.equal(await acquire(limiter, f), null, 'a fourth is refused: three is the limit across old and new instances');
  permit?.release(0);
  // The older instances are gone: their counter expires.
  await older.del(`${f.base}:conc`);
  const held = [await acquire(limiter, f), await acquire(limiter, f), await acquire(limiter, f)];
  t.ok(held.every(Boolean), 'the leases alone again: three admitted');
  for (const p of held) p?.release(0);
});
