// The slot leases of both counter stores, in memory and in the real Redis, behave alike: a lease
// nobody renews expires even while other holders take and give slots on the same key, one renewed
// outlives its TTL, and giving a lease back twice (a retried give-back) ends that lease only. In
// Redis a take also counts older releases' counter of the same slots (a rolling upgrade).
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { MemoryCounters, type Counters, type SlotLease } from '../../core/pipeline/rate-limit-counters.ts';
import { ValkeyCounters } from '../../core/pipeline/rate-limit-valkey.ts';
import { ValkeyGuard } from '../../core/pipeline/valkey-guard.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';

const log = pino({ level: 'silent' });
const TTL_MS = 400;

// DB 0: no test flushes it (keys here are unique and expire with their leases).
const redis = new Redis('redis://127.0.0.1:6379/0');
t.teardown(() => { redis.disconnect(); });
await waitForValkey(redis);

const stores: Array<{ name: string; counters: () => Counters }> = [
  { name: 'memory', counters: () => new MemoryCounters(TTL_MS) },
  {
    name: 'redis',
    counters: () => new ValkeyCounters(new ValkeyGuard(redis, { commandTimeoutMs: 5_000, openMs: 1_000 }, log, new Registry(), 'test'), redis, TTL_MS),
  },
];

let seq = 0;
const leaseKey = () => `relay:rl:counters-${process.pid}-${Date.now()}-${++seq}:limit:leases`;

for (const store of stores) {
  t.test(`${store.name}: a lease not renewed expires while the key stays busy`, async (t) => {
    const counters = store.counters();
    const key = leaseKey();
    const ghost: SlotLease = { key, holder: 'ghost' };
    t.equal(await counters.takeSlot(ghost), 1);
    let taken = 0;
    await eventually(async () => {
      const busy = { key, holder: `busy-${++taken}` };
      const inFlight = await counters.takeSlot(busy);
      await counters.giveSlot(busy);
      return inFlight === 1;
    }, TTL_MS * 20, TTL_MS / 5);
    t.ok(taken > 1, 'the ghost lease counted until it expired');
  });

  t.test(`${store.name}: a lease renewed outlives its TTL; one given back is not renewed`, async (t) => {
    const counters = store.counters();
    const key = leaseKey();
    const held = { key, holder: 'held' };
    const given = { key, holder: 'given' };
    await counters.takeSlot(held);
    await counters.takeSlot(given);
    await counters.giveSlot(given);
    // Time passing is what is tested: three lifetimes of a lease, renewed as often as HeldSlots does.
    const until = Date.now() + TTL_MS * 3;
    while (Date.now() < until) {
      await counters.renewSlots([held, given]);
      await new Promise((r) => setTimeout(r, TTL_MS / 3));
    }
    t.equal(await counters.takeSlot({ key, holder: 'probe' }), 2, 'the renewed lease and the probe');
  });

  t.test(`${store.name}: a lease given back twice ends that lease only`, async (t) => {
    const counters = store.counters();
    const key = leaseKey();
    const first = { key, holder: 'first' };
    await counters.takeSlot(first);
    await counters.takeSlot({ key, holder: 'second' });
    await counters.giveSlot(first);
    await counters.giveSlot(first);
    t.equal(await counters.takeSlot({ key, holder: 'third' }), 2, 'second and third hold slots');
  });
}

t.test('redis: the leases are a sorted set that disappears once idle', async (t) => {
  const counters = stores[1].counters();
  const key = leaseKey();
  await counters.takeSlot({ key, holder: 'only' });
  t.equal(await redis.type(key), 'zset');
  const ttl = await redis.pttl(key);
  t.ok(ttl > 0 && ttl <= TTL_MS, `the set expires with its last lease (PTTL ${ttl})`);
});

t.test('redis: a take counts the slots older releases hold in their counter (a rolling upgrade)', async (t) => {
  const counters = stores[1].counters();
  const key = leaseKey();
  const olderCounterKey = key.replace(/:leases$/, ':conc');
  t.teardown(async () => { await redis.del(olderCounterKey); });
  t.equal(await counters.takeSlot({ key, holder: 'first', olderCounterKey }), 1, 'no older counter: the leases alone');
  // An older instance's INCR of its counter, with the TTL it gave it.
  await redis.set(olderCounterKey, 3, 'PX', 60_000);
  t.equal(await counters.takeSlot({ key, holder: 'second', olderCounterKey }), 5, 'two leases and the three older slots');
  t.equal(await redis.get(olderCounterKey), '3', 'the older counter is read, not changed');
});
