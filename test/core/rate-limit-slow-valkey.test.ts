// A Valkey slower than the rate limiter's command deadline (it answers, late): requests are let
// through (fail open) holding no slot, yet the slot-taking script lands in Valkey. Such a slot, and
// one a request gave back while its give-back could not be sent (breaker open, not connected),
// must not stay taken until its lease expires: once Valkey is fast again the count is the slots
// really held, and requests within the limit are admitted. A give-back the guard gave up on is
// sent again, and the two end that lease only.
// Real Redis behind a proxy that delays its answers; the leases are counted with a separate client,
// after two PINGs on the limiter's connection (the second written after any give-back), no waits guessed.
import t, { type Test } from 'tap';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Redis } from 'ioredis';
import { Registry, type Counter, type Gauge } from 'prom-client';
import { createRateLimiter, type Permit, type RateLimiter } from '../../core/pipeline/rate-limit.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';
import type { Principal } from '../../core/hooks.ts';
import type { CatalogSnapshot } from '../../core/catalog/snapshot.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';

const log = pino({ level: 'silent' });
const DEADLINE_MS = 100; // the guard's (config default 50 ms)
const SLOW_MS = 1_000; // how late the slow Valkey answers: well past the deadline, well within ioredis's
const BREAKER_OPEN_MS = 1_000;
const SLOT_TTL_MS = 60_000;

const proxy = await startHangingProxy(6379);
const direct = new Redis(6379);
const tag = `slow-${process.pid}-${Date.now()}`;
t.teardown(async () => {
  const keys = await direct.keys(`relay:rl:${tag}*`);
  if (keys.length > 0) await direct.del(...keys);
  direct.disconnect();
  await proxy.close();
});

let seq = 0;
function fixture(concurrentRequests: number): { principal: Principal; snapshot: CatalogSnapshot; key: string } {
  const keyId = `${tag}-${++seq}`;
  const limit = { metadata: { id: 'conc' }, spec: { concurrentRequests } };
  const principal = { relayKey: { metadata: { id: keyId } }, policy: { spec: { rateLimitIds: ['conc'] } } } as unknown as Principal;
  const snapshot = { rateLimits: new Map([['conc', limit]]) } as unknown as CatalogSnapshot;
  return { principal, snapshot, key: `relay:rl:${keyId}:conc:leases` };
}

/** A limiter on a client made with Relay's options, through the proxy. */
async function setup(t: Test) {
  const client = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(10_000) });
  t.teardown(() => { client.disconnect(); });
  await waitForValkey(client);
  const metrics = new Registry();
  const limiter = createRateLimiter({
    redis: client, log, metrics, concurrencySlotTtlMs: SLOT_TTL_MS, valkeyCommandTimeoutMs: DEADLINE_MS, valkeyBreakerOpenMs: BREAKER_OPEN_MS,
  });
  const side = fixture(1_000);
  return {
    client,
    limiter,
    /** Commands the guard gave up on. */
    async timeouts() {
      const errors = (await (metrics.getSingleMetric('relay_valkey_unavailable_total') as Counter).get()).values;
      return errors.find((v) => v.labels.reason === 'timeout')?.value ?? 0;
    },
    /** Every answer delivered and anything written in reply to them applied in Redis. */
    async settled() {
      await client.ping();
      await new Promise((r) => setImmediate(r));
      await client.ping();
    },
    /** Requests on another key until the guard uses Valkey again (its breaker closed). */
    async breakerClosed() {
      const open = metrics.getSingleMetric('relay_valkey_breaker_open') as Gauge;
      await eventually(async () => {
        (await acquire(limiter, side))?.release(0);
        return (await open.get()).values[0]?.value === 0;
      }, 10_000, 50);
    },
    /** Opens the breaker: the guard's consecutive timeouts on another key. */
    async openBreaker() {
      for (let i = 0; i < 3; i++) (await acquire(limiter, side))?.release(0);
      assert.equal((await (metrics.getSingleMetric('relay_valkey_breaker_open') as Gauge).get()).values[0]?.value, 1, 'setup: the breaker is open');
    },
  };
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

/** Which of `n` requests in a row (each still in flight) are admitted; all released after. */
async function admitted(limiter: RateLimiter, f: { principal: Principal; snapshot: CatalogSnapshot }, n: number): Promise<boolean[]> {
  const permits = [];
  for (let i = 0; i < n; i++) permits.push(await acquire(limiter, f));
  for (const p of permits) p?.release(0);
  return permits.map((p) => p !== null);
}

const count = async (key: string) => direct.zcard(key);

t.test('slots taken by takes that landed after the guard gave up are given back', async (t) => {
  const { limiter, settled, breakerClosed } = await setup(t);
  const f = fixture(3);
  proxy.delay(SLOW_MS);
  t.teardown(() => proxy.delay(0));
  // Five requests while slow: the first three time out (their takes sent), then the breaker is open.
  const slow = await admitted(limiter, f, 5);
  assert.deepEqual(slow, [true, true, true, true, true], 'setup: let through while slow (fail open)');
  assert.equal(await count(f.key), 3, 'setup: the three takes the guard gave up on landed in Redis');
  proxy.delay(0);
  await settled();
  t.equal(await count(f.key), 0, 'once the late answers are in, no slot is taken: nobody holds one');
  await breakerClosed();
  t.same(await admitted(limiter, f, 4), [true, true, true, false], 'the limit admits three in flight again, and only three');
});

t.test('a slot released while the breaker is open is given back', async (t) => {
  const { limiter, settled, breakerClosed, openBreaker } = await setup(t);
  const f = fixture(2);
  const held = await acquire(limiter, f);
  assert.ok(held && await count(f.key) === 1, 'setup: one slot held');
  proxy.delay(SLOW_MS);
  t.teardown(() => proxy.delay(0));
  await openBreaker();
  held.release(0);
  proxy.delay(0);
  await settled();
  t.equal(await count(f.key), 0, 'the released slot is free');
  await breakerClosed();
  t.same(await admitted(limiter, f, 3), [true, true, false], 'two in flight admitted again');
});

t.test('a slot released while Valkey is not connected is given back once it is', async (t) => {
  const { client, limiter, settled } = await setup(t);
  const f = fixture(2);
  const held = await acquire(limiter, f);
  assert.ok(held && await count(f.key) === 1, 'setup: one slot held');
  const closed = new Promise((r) => client.once('close', r));
  await proxy.refuse();
  await closed;
  held.release(0);
  const ready = new Promise((r) => client.once('ready', r));
  await proxy.reopen();
  await ready;
  await settled();
  t.equal(await count(f.key), 0, 'the released slot is free');
  t.same(await admitted(limiter, f, 3), [true, true, false], 'two in flight admitted again');
});

t.test('a give-back the guard gave up on, sent again, frees its own slot only', async (t) => {
  const { limiter, settled, breakerClosed, timeouts } = await setup(t);
  const f = fixture(2);
  const [first, second] = [await acquire(limiter, f), await acquire(limiter, f)];
  assert.ok(first && second && await count(f.key) === 2, 'setup: two slots held');
  proxy.delay(SLOW_MS);
  t.teardown(() => proxy.delay(0));
  // Its ZREM is sent, the guard gives up on the answer, and the give-back is sent again off the request path.
  first.release(0);
  await eventually(async () => (await timeouts()) === 1, 10_000);
  proxy.delay(0);
  await settled();
  t.equal(await count(f.key), 1, 'the second request still holds its slot');
  await breakerClosed();
  t.same(await admitted(limiter, f, 2), [true, false], 'one more admitted, not two');
  second.release(0);
});
