import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ValkeyUsageBackend } from '../../plugins/log-valkey/valkey-usage-backend.ts';
import plugin from '../../plugins/log-valkey/index.ts';
import { usageBackendSuite } from '../support/usage-backend-suite.ts';
import { usageEvent } from '../support/observer-fixtures.ts';

const REDIS_URL = process.env.RELAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function connect(): Promise<Redis | null> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    return null;
  }
}

async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

t.test('conformance on Redis', async (t) => {
  const probe = await connect();
  if (!probe) { t.plan(0, `no Redis/Valkey at ${REDIS_URL} (set RELAY_TEST_REDIS_URL)`); return; }
  probe.disconnect();
  usageBackendSuite(t, async () => {
    const redis = (await connect())!;
    const keyPrefix = `relay-test:${randomBytes(4).toString('hex')}:`;
    const backend = new ValkeyUsageBackend({ redis, keyPrefix, maxEvents: 10_000, ttlSeconds: 86_400 });
    return { backend, cleanup: async () => { await dropPrefix(redis, keyPrefix); redis.disconnect(); } };
  });
});

t.test('the history is capped: the oldest events leave', async (t) => {
  const redis = await connect();
  if (!redis) { t.plan(0, 'no Redis'); return; }
  const keyPrefix = `relay-test:${randomBytes(4).toString('hex')}:`;
  t.teardown(async () => { await dropPrefix(redis, keyPrefix); redis.disconnect(); });
  const backends: ValkeyUsageBackend[] = [];
  await plugin.register({ valkey: () => redis, log: { warn() {} }, hooks: { addUsageBackend: (b: ValkeyUsageBackend) => backends.push(b) } } as never,
    { keyPrefix, maxEvents: 25, ttlSeconds: 3600, timeoutMs: 5_000 });
  const backend = backends[0];
  const now = Date.now();
  const events = Array.from({ length: 40 }, (_, i) => usageEvent({ started_at: new Date(now - (40 - i) * 1000).toISOString() }));
  for (let i = 0; i < 40; i += 10) await backend.write(events.slice(i, i + 10));
  const page = await backend.list({ limit: 500 });
  t.equal(page.items.length, 25);
  t.same(page.items.map((e) => e.request_id), events.slice(15).reverse().map((e) => e.request_id), 'the newest 25 remain');
  t.equal(await backend.get(events[0].request_id), null, 'trimmed events are deleted');
  t.equal(await redis.exists(`${keyPrefix}event:${events[39].request_id}`), 1);
  t.ok((await redis.ttl(`${keyPrefix}event:${events[39].request_id}`)) > 3500, 'events carry the TTL');
  const stale = usageEvent({ started_at: new Date(now - 2 * 3600_000).toISOString() });
  await backend.write([stale]);
  t.equal((await backend.list({ limit: 500 })).items.some((e) => e.request_id === stale.request_id), false, 'events older than the TTL leave the index');
});

t.test('without a connection the plugin says what is missing', async (t) => {
  t.throws(() => plugin.register({ valkey: () => null, log: { warn() {} }, hooks: { addUsageBackend() {} } } as never,
    { keyPrefix: 'x', maxEvents: 1, ttlSeconds: 1, timeoutMs: 5_000 }), /valkey\.url/);
});
