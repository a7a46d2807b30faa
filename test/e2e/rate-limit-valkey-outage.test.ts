// Valkey lost under rate limits: requests keep being served (fail open) and an outage costs a
// request at most one short command deadline, then a circuit breaker skips Valkey, visible in
// /metrics; once Valkey is back the limits use it again. The outage is made by a TCP proxy in
// front of the real Redis that freezes (a partition: the connection stays up, nothing answers) or
// drops every connection (refused).
import t from 'tap';
import net from 'node:net';
import { Redis } from 'ioredis';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { eventually } from '../../core/testing.ts';

const REDIS_DB = 12;

/** A TCP proxy to 127.0.0.1:6379 that can freeze, drop its connections, and come back. */
class FaultyProxy {
  port = 0;
  private server: net.Server | null = null;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private frozen = false;

  async listen(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(6379, '127.0.0.1');
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const drop = () => { client.destroy(); upstream.destroy(); this.pairs.delete(pair); };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      if (this.frozen) { client.pause(); upstream.pause(); }
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Connections stay open, nothing is forwarded. */
  freeze(): void {
    this.frozen = true;
    for (const [a, b] of this.pairs) { a.unpipe(); b.unpipe(); a.pause(); b.pause(); }
  }

  /** Every connection dropped and the port closed: connections are refused. */
  async kill(): Promise<void> {
    for (const [a, b] of this.pairs) { a.destroy(); b.destroy(); }
    this.pairs.clear();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server = null;
    this.frozen = false;
  }
}

const proxy = new FaultyProxy();
await proxy.listen();
const redis = new Redis(`redis://127.0.0.1:6379/${REDIS_DB}`);
await redis.flushdb();
const upstream = await startFakeUpstream();
const relay = await startRelay({
  env: { VALKEY_URL: `redis://127.0.0.1:${proxy.port}/${REDIS_DB}` },
  // A deadline a loaded CI machine's Redis meets while it is up (the default is 50 ms).
  config: { valkey: { breakerOpenMs: 1_000, commandTimeoutMs: 200 } },
});
t.teardown(async () => {
  await relay.close();
  await upstream.close();
  await proxy.kill();
  await redis.quit();
});

const limit = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: 'valkey outage' }, spec: { requestsPerMinute: 100_000, concurrentRequests: 1_000 } });
const seeded = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'rl-outage', policy: { rateLimitIds: [limit.body.metadata.id] } });
await settled(relay, (snap) => snap.relayKeys.has(seeded.relayKeyId) && snap.hostKeysOfHost(seeded.hostId).length > 0);

/** One rate-limited request: its status and how long it took (bounded: a hang fails, not stalls). */
async function timedChat(): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST', signal: AbortSignal.timeout(5_000),
      headers: { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rl-outage', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

async function burst(n: number): Promise<Array<{ status: number; ms: number }>> {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await timedChat());
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const metric = async (pattern: RegExp): Promise<number> => {
  const text = (await relay.api('GET', '/metrics')).body as string;
  const m = text.match(pattern);
  return m ? Number(m[1]) : NaN;
};
const breakerOpen = () => metric(/^relay_valkey_breaker_open\{use="rate-limits"\} (\d+)/m);
/** Rate-limit commands not run, for `reason` (0 before the first). */
const skipped = async (reason: string) => (await metric(new RegExp(`^relay_valkey_unavailable_total\\{use="rate-limits",reason="${reason}"\\} (\\d+)`, 'm'))) || 0;

let baseline = 0;

t.test('with Valkey up, the limits count in it', async (t) => {
  const runs = await burst(10);
  t.same(runs.map((r) => r.status), Array(10).fill(200));
  baseline = median(runs.map((r) => r.ms));
  const keys = await redis.keys('relay:rl:*');
  t.ok(keys.length > 0, 'the counters are in Valkey');
  t.equal(await breakerOpen(), 0, 'breaker closed');
});

t.test('Valkey partitioned (connection up, no answers): served, at most a few ms added', async (t) => {
  proxy.freeze();
  const runs = await burst(30);
  t.same(runs.map((r) => r.status), Array(30).fill(200), 'every request served (fail open)');
  const slowest = Math.max(...runs.map((r) => r.ms));
  t.ok(slowest < baseline + 250, `slowest ${slowest.toFixed(0)} ms: at most one 200 ms deadline per request, never seconds`);
  t.equal(await breakerOpen(), 1, '/metrics: the breaker is open');
  // Once open, a request does not wait on Valkey at all: the breaker answers for it.
  t.ok(await skipped('breaker-open') >= 20, '/metrics: most of the burst skipped Valkey (breaker open), not waited for it');
  t.ok(await metric(/^relay_rate_limit_fail_open_total (\d+)/m) >= 30, '/metrics counts the requests let through');
  t.ok(await metric(/^relay_valkey_unavailable_total\{use="rate-limits",reason="timeout"\} (\d+)/m) >= 1, '/metrics: timeouts');
});

t.test('Valkey gone (connections refused): still served at once', async (t) => {
  await proxy.kill();
  const runs = await burst(20);
  t.same(runs.map((r) => r.status), Array(20).fill(200));
  const slowest = Math.max(...runs.map((r) => r.ms));
  t.ok(slowest < baseline + 250, `slowest ${slowest.toFixed(0)} ms`);
  const before = await skipped('breaker-open') + await skipped('not-connected');
  await burst(10);
  t.ok(await skipped('breaker-open') + await skipped('not-connected') - before >= 10, '/metrics: each request skipped Valkey at once (breaker open or not connected)');
});

t.test('Valkey back: the breaker closes and the limits count in it again', async (t) => {
  await proxy.listen();
  await redis.flushdb();
  await eventually(async () => {
    await timedChat();
    return (await breakerOpen()) === 0 && (await redis.keys('relay:rl:*')).length > 0;
  }, 20_000, 200);
  t.pass('counting in Valkey again');
});
