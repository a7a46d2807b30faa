// Concurrent-request slots stay exact when requests stay in flight past their lease's TTL (the
// leak guard): the lease is renewed while held, and a release ends only its own lease, so the
// limit cannot drift upwards. In memory and in Redis (DB 0, which no test flushes: the e2e tests
// on DB 13 flush it while this file may be running beside them).
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import { createRateLimiter, type Permit } from '../../core/pipeline/rate-limit.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import type { Principal } from '../../core/hooks.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';

const log = pino({ level: 'silent' });
const TTL_MS = 100;
// A deadline a loaded machine's Redis meets: a command past it fails open, admitting what the test expects refused.
const DEADLINE_MS = 5_000;

let seq = 0;
function fixture(): { principal: Principal; snapshot: CatalogSnapshot } {
  const limitId = `limit-${++seq}-${Date.now()}`;
  const limit = { metadata: { id: limitId }, spec: { concurrentRequests: 2 } };
  const principal = { relayKey: { metadata: { id: `key-${seq}` } }, policy: { spec: { rateLimitIds: [limitId] } } } as unknown as Principal;
  const snapshot = { rateLimits: new Map([[limitId, limit]]) } as unknown as CatalogSnapshot;
  return { principal, snapshot };
}

async function refused(acquire: () => Promise<Permit>): Promise<boolean> {
  try {
    await acquire();
    return false;
  } catch (err) {
    return (err as { code?: string }).code === 'RELAY_ERR_RATE_LIMITED';
  }
}

const stores: Array<{ name: string; redis: () => Redis | null }> = [
  { name: 'memory', redis: () => null },
  { name: 'redis', redis: () => new Redis('redis://127.0.0.1:6379/0') },
];

for (const store of stores) {
  t.test(`${store.name}: releases after the guard expired do not free phantom slots`, async (t) => {
    const redis = store.redis();
    t.teardown(async () => { await redis?.quit(); });
    if (redis) await waitForValkey(redis);
    const limiter = createRateLimiter({ redis, log, concurrencySlotTtlMs: TTL_MS, valkeyCommandTimeoutMs: DEADLINE_MS });
    const { principal, snapshot } = fixture();
    const acquire = () => limiter.acquire(principal, snapshot) ?? Promise.reject(new Error('the fixture policy has limits'));

    const first = await acquire();
    const second = await acquire();
    t.ok(await refused(acquire), 'a third request is refused while two are in flight');
    await new Promise((r) => setTimeout(r, TTL_MS * 3)); // the guard runs out
    first.release(0);
    second.release(0);
    await new Promise((r) => setTimeout(r, 50)); // releases are not awaited

    const held = [await acquire(), await acquire()];
    t.ok(await refused(acquire), 'still two slots, not four');
    for (const p of held) p.release(0);
  });

  t.test(`${store.name}: slots in use keep their guard alive`, async (t) => {
    const redis = store.redis();
    t.teardown(async () => { await redis?.quit(); });
    if (redis) await waitForValkey(redis);
    const limiter = createRateLimiter({ redis, log, concurrencySlotTtlMs: TTL_MS * 4, valkeyCommandTimeoutMs: DEADLINE_MS });
    const { principal, snapshot } = fixture();
    const acquire = () => limiter.acquire(principal, snapshot) ?? Promise.reject(new Error('the fixture policy has limits'));
    const long = await acquire();
    // Traffic keeps coming: each acquire and release renews the guard.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, TTL_MS));
      const p = await acquire();
      p.release(0);
    }
    await new Promise((r) => setTimeout(r, 50));
    const second = await acquire();
    t.ok(await refused(acquire), 'the long request still holds its slot after several guard lifetimes');
    long.release(0);
    second.release(0);
  });
}
