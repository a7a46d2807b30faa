// A Valkey that accepts connections and never answers (a proxy in front of the real Redis) must
// not wedge Relay: it starts (key health's load of shared marks fails past valkey.timeoutMs and it
// starts with nothing marked), it serves while Valkey is silent (rate limits fail open, a failing
// upstream's health mark is kept locally), and once Valkey answers again the limits count in it,
// without the connection that went silent having to be cut by anyone else.
import t from 'tap';
import { Redis } from 'ioredis';
import { eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';
import { settlesWithin } from '../support/settles-within.ts';

const REDIS_DB = 15;
// Short deadlines so the test is quick; a hang is told by waiting far longer (BOUND_MS).
const VALKEY = { timeoutMs: 300, commandTimeoutMs: 200, breakerOpenMs: 500 };
const BOUND_MS = 30_000;

const proxy = await startHangingProxy(6379);
const direct = new Redis(`redis://127.0.0.1:6379/${REDIS_DB}`);
await direct.flushdb();
const up = await startFakeUpstream();
up.script((req) => (req.json?.model === 'vh-failing'
  ? { status: 500, body: { error: { message: 'upstream broke', type: 'server_error' } } }
  : { body: openai.chatCompletion({ model: String(req.json?.model) }) }));
let relay: TestRelay | null = null;
t.teardown(async () => {
  proxy.dropHeld();
  await relay?.close();
  await proxy.close();
  await up.close();
  await direct.flushdb();
  await direct.quit();
});

const rateLimitKeys = async () => (await direct.keys('relay:rl:*')).length;
const chat = (key: string, model: string) => viaRelay(relay!, '/vendor-a/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'hi' }] });
let limited: Awaited<ReturnType<typeof seedRoute>>;
let failing: Awaited<ReturnType<typeof seedRoute>>;

t.test('Relay starts while Valkey accepts connections and never answers, and serves', async (t) => {
  proxy.hang();
  const starting = startRelay({ config: { valkey: { url: `redis://127.0.0.1:${proxy.port}/${REDIS_DB}`, ...VALKEY } } });
  t.equal(await settlesWithin(starting, BOUND_MS), 'resolved', 'start-up does not wait on Valkey for good');
  // Without a deadline start-up waits until Valkey answers: let it, so the rest can run.
  proxy.answer();
  proxy.dropHeld();
  relay = await starting;
  const limit = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: 'valkey hang' }, spec: { requestsPerMinute: 100_000 } });
  limited = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'vh-limited', policy: { rateLimitIds: [limit.body.metadata.id] } });
  failing = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'vh-failing' });
  await routeLive(relay, limited);
  await routeLive(relay, failing);
  t.equal((await chat(limited.relayKey, 'vh-limited')).status, 200);
});

t.test('Valkey answering: the limits count in it', async (t) => {
  proxy.answer();
  await eventually(async () => (await chat(limited.relayKey, 'vh-limited')).status === 200 && (await rateLimitKeys()) > 0, BOUND_MS, 100).catch(() => undefined);
  t.ok(await rateLimitKeys() > 0, 'rate-limit counters are in Valkey');
});

t.test('Valkey silent mid-conversation: requests are served; once it answers again the limits count in it again', async (t) => {
  proxy.stall();
  await direct.flushdb();
  for (let i = 0; i < 5; i++) {
    const res = await chat(limited.relayKey, 'vh-limited');
    t.equal(res.status, 200, `request ${i + 1} served (rate limits fail open)`);
  }
  const broken = await chat(failing.relayKey, 'vh-failing');
  t.equal(broken.status, 500, 'an upstream failure is answered (its key health mark cannot be shared, and need not be)');
  t.equal((await chat(limited.relayKey, 'vh-limited')).status, 200, 'and Relay goes on serving');
  t.equal(await rateLimitKeys(), 0, 'nothing reached Valkey meanwhile');

  proxy.answer();
  await eventually(async () => (await chat(limited.relayKey, 'vh-limited')).status === 200 && (await rateLimitKeys()) > 0, BOUND_MS, 100).catch(() => undefined);
  t.ok(await rateLimitKeys() > 0, 'Valkey answers again: the silent connection was replaced and the limits count in it');
});
