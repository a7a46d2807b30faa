// A concurrency slot is renewed for at most rateLimits.maxSlotHoldMs: a permit never given back (a
// bug on a live instance) frees its slot one lease TTL after the maximum hold even while the key
// stays busy, warned once (relay key id and limit, no secret) and counted; a request under the
// maximum hold keeps its slot past its TTL, and one given back is neither warned nor counted. In
// memory and in the real Redis (DB 0, which no test flushes: keys here are unique and expire).
import t, { type Test } from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createRateLimiter, type Permit, type RateLimiter } from '../../core/pipeline/rate-limit.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';
import type { Principal } from '../../core/hooks.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';

const TTL_MS = 400;
const MAX_HOLD_MS = 1_200;
// A deadline a loaded machine's Redis meets: a command past it fails open, admitting what the test expects refused.
const DEADLINE_MS = 5_000;
const SECRET = 'rk-live-not-to-be-logged';

let seq = 0;
function fixture(): { principal: Principal; snapshot: CatalogSnapshot; keyId: string; limitId: string } {
  const limitId = `max-hold-${process.pid}-${Date.now()}-${++seq}`;
  const keyId = `key-${seq}`;
  const limit = { metadata: { id: limitId }, spec: { concurrentRequests: 1 } };
  const principal = {
    relayKey: { metadata: { id: keyId }, keyHash: SECRET }, policy: { spec: { rateLimitIds: [limitId] } }, passthroughCredential: { authorization: SECRET },
  } as unknown as Principal;
  const snapshot = { rateLimits: new Map([[limitId, limit]]) } as unknown as CatalogSnapshot;
  return { principal, snapshot, keyId, limitId };
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

interface Instance { limiter: RateLimiter; warnings: string[]; overheld: () => Promise<number> }

async function instance(t: Test, redis: Redis | null): Promise<Instance> {
  if (redis) {
    t.teardown(() => { redis.disconnect(); });
    await waitForValkey(redis);
  }
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(line); } });
  const metrics = new Registry();
  const limiter = createRateLimiter({ redis, log, metrics, concurrencySlotTtlMs: TTL_MS, maxSlotHoldMs: MAX_HOLD_MS, valkeyCommandTimeoutMs: DEADLINE_MS });
  t.teardown(() => limiter.close());
  const overheld = async () => (await metrics.getSingleMetric('relay_rate_limit_slots_overheld_total')!.get()).values[0]?.value ?? 0;
  return { limiter, warnings, overheld };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const store of [{ name: 'memory', redis: () => null }, { name: 'redis', redis: () => new Redis('redis://127.0.0.1:6379/0') }]) {
  t.test(`${store.name}: a permit never given back frees its slot one TTL after the maximum hold, while the key stays busy`, async (t) => {
    const f = fixture();
    const { limiter, warnings, overheld } = await instance(t, store.redis());
    const takenAt = Date.now();
    t.ok(await acquire(limiter, f), 'the leaked permit takes the only slot (and is never released)');
    // Time passing is what is tested: two lifetimes of a lease, under the maximum hold.
    await sleep(TTL_MS * 2);
    t.equal(await acquire(limiter, f), null, 'under the maximum hold the slot is renewed: still refused');
    // Other requests keep taking and giving on the key until one is admitted.
    await eventually(async () => {
      const permit = await acquire(limiter, f);
      permit?.release(0);
      return permit !== null;
    }, MAX_HOLD_MS + TTL_MS * 10, TTL_MS / 5);
    const freedAfter = Date.now() - takenAt;
    t.ok(freedAfter >= MAX_HOLD_MS, `not freed before the maximum hold (${freedAfter} ms)`);
    const held = await acquire(limiter, f);
    t.ok(held, 'a new request holds the slot');
    t.equal(await acquire(limiter, f), null, 'and the limit is one again');
    held?.release(0);

    t.equal(warnings.length, 1, 'warned once');
    const warning = JSON.parse(warnings[0]!) as Record<string, unknown>;
    t.match(warning, { level: 40, relayKeyId: f.keyId, rateLimitId: f.limitId, maxSlotHoldMs: MAX_HOLD_MS, msg: /maxSlotHoldMs/ });
    t.notOk(warnings[0]!.includes(SECRET), 'the warning carries no key secret');
    t.equal(await overheld(), 1, 'counted in relay_rate_limit_slots_overheld_total');
  });

  t.test(`${store.name}: a permit given back before the maximum hold is neither warned nor counted`, async (t) => {
    const f = fixture();
    const { limiter, warnings, overheld } = await instance(t, store.redis());
    const permit = await acquire(limiter, f);
    t.ok(permit, 'a request holds the only slot');
    await sleep(TTL_MS * 2);
    permit?.release(0);
    await sleep(50); // releases are not awaited
    const next = await acquire(limiter, f);
    t.ok(next, 'its slot is free at once');
    next?.release(0);
    // Time passing is what is tested: past the maximum hold of the first permit, and a lease later.
    await sleep(MAX_HOLD_MS + TTL_MS);
    t.same(warnings, [], 'no warning');
    t.equal(await overheld(), 0, 'nothing counted');
  });
}

t.test('a maximum hold shorter than the lease TTL is refused, naming the setting', async (t) => {
  const log = pino({ level: 'silent' });
  t.throws(() => createRateLimiter({ redis: null, log, concurrencySlotTtlMs: 1_000, maxSlotHoldMs: 999 }), { name: 'StartupError', message: /rateLimits\.maxSlotHoldMs \(999\) must be at least the concurrency-slot lease TTL \(1000 ms\)/ });
  t.throws(() => createRateLimiter({ redis: null, log, maxSlotHoldMs: 0 }), { name: 'StartupError' });
  const limiter = createRateLimiter({ redis: null, log, concurrencySlotTtlMs: 1_000, maxSlotHoldMs: 1_000 });
  limiter.close();
  t.pass('one equal to the TTL is taken');
});
