// Budget alerts from two Relay instances sharing Valkey (and the database): requests served by
// both at once cross each fraction, and each fraction still reaches the webhook exactly once;
// the claim is the Valkey key (SET NX), of which one of many concurrent claimers wins.
import t from 'tap';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { ValkeyAlertClaims } from '../../core/budgets/valkey-alert-claims.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/13';
const redis = new Redis(REDIS_URL);
await waitForValkey(redis);
await redis.flushdb();
const db = await createTestDatabase();
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const hooks = await startWebhookReceiver();
const masterKey = generateMasterKey();
const start = () => startRelay({ database: db.url, masterKey, config: { valkey: { url: REDIS_URL }, budgets: { alerts: { attempts: 2, retryBaseMs: 50, timeoutMs: 2_000 } } } });
const relays: TestRelay[] = [await start(), await start()];
const [a, b] = relays as [TestRelay, TestRelay];
t.teardown(async () => {
  for (const r of relays) await r.close();
  await up.close();
  await hooks.close();
  await db.drop();
  await redis.quit();
});

t.test('two instances, concurrent requests on both: each fraction alerts once', async (t) => {
  const route = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'alert-valkey-gpt', upstreamModel: 'local-model' });
  await a.api('POST', '/api/pricings', { metadata: { displayName: 'price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  const budget = await a.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'Shared alerts' },
    spec: { scope: { relayKeyId: route.relayKeyId }, window: 'weekly', limitAmount: 0.4, action: 'alert', alertAt: [0.25, 0.5, 0.75, 1], alertWebhooks: [{ url: `${hooks.url}/shared`, format: 'json' }] },
  });
  t.equal(budget.status, 201);
  const id = budget.body.metadata.id as string;
  await eventually(() => relays.every((r) => r.relay.sync.snapshot().byKind('budgets').has(id) && r.relay.sync.snapshot().relayKeys.has(route.relayKeyId) && r.relay.sync.snapshot().pricings.size === 1));
  const chat = (on: TestRelay) => viaRelay(on, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'alert-valkey-gpt', messages: [{ role: 'user', content: 'hi' }] });

  // Three rounds of eight at once, half on each instance ($1.56 of $0.40): every fraction is crossed while both count.
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(relays[i % 2]!).then((res) => ({ res, on: relays[i % 2]! }))));
    t.ok(answers.every(({ res }) => res.status === 200));
    await Promise.all(answers.map(({ res, on }) => usageRecord(on, res.headers.get('x-request-id')!)));
  }
  await eventually(() => hooks.on('/shared').length >= 4, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 800));
  const received = hooks.on('/shared');
  t.equal(received.length, 4, 'four fractions, four alerts, from two instances');
  t.same(received.map((h) => h.body.threshold).sort(), [0.25, 0.5, 0.75, 1]);
  const keys = await redis.keys(`relay:budget-alert:${id}:*`);
  // relay:budget-alert:<id>:<digest>:<window start>:<fraction>, and the key older instances check: relay:budget-alert:<id>:<window start>:<fraction>.
  t.equal(keys.filter((k) => k.split(':').length === 6).length, 4, 'each claimed through a Valkey key of its version');
  t.equal(keys.filter((k) => k.split(':').length === 5).length, 4, 'and marked claimed for instances from before the digest');
  for (const on of relays) {
    await eventually(async () => ((await on.api<any>('GET', `/api/budgets/${id}/alerts`)).body.alerts ?? []).filter((x: any) => x.status === 'delivered').length >= 4, 5_000);
    const alerts = await on.api<any>('GET', `/api/budgets/${id}/alerts`);
    t.equal(alerts.body.alerts.length, 4, 'both instances read the four recorded alerts');
    t.ok(alerts.body.alerts.every((x: any) => x.status === 'delivered'));
  }
});

t.test('of many concurrent claims of one alert in Valkey, one wins', async (t) => {
  const clients = Array.from({ length: 3 }, () => new Redis(REDIS_URL));
  t.teardown(() => Promise.all(clients.map((c) => c.quit())));
  await Promise.all(clients.map((c) => waitForValkey(c)));
  const claimers = clients.map((c) => new ValkeyAlertClaims(c));
  const end = Date.now() + 60_000;
  const alert = { budgetId: 'budget-x', countsDigest: 'd1', windowStartMs: 1_000, threshold: 0.8 };
  const wins = await Promise.all(Array.from({ length: 30 }, (_, i) => claimers[i % 3]!.claim(alert, end)));
  const won = wins.filter((w) => w !== null);
  t.equal(won.length, 1);
  t.ok(await redis.pttl('relay:budget-alert:budget-x:d1:1000:0.8') > 60_000, 'the claim outlives the window (by a day)');
  await claimers[0]!.release(alert, won[0]!);
  t.not(await claimers[1]!.claim(alert, end), null, 'a released claim can be won again');
  t.not(await claimers[2]!.claim({ ...alert, threshold: 0.5 }, null), null, 'another fraction is its own alert');
  t.equal(await redis.pttl('relay:budget-alert:budget-x:d1:1000:0.5'), -1, 'a lifetime claim never expires');
});

t.test('rolling upgrade beside instances from before the digest (relay:budget-alert:<budget>:<window>:<fraction>)', async (t) => {
  const client = new Redis(REDIS_URL);
  t.teardown(() => client.quit());
  await waitForValkey(client);
  const claims = new ValkeyAlertClaims(client);
  const end = Date.now() + 60_000;
  // What an older instance sends to claim an alert.
  const olderClaims = (budgetId: string, threshold: number) => redis.set(`relay:budget-alert:${budgetId}:1000:${threshold}`, String(Date.now()), 'PX', 60_000, 'NX');
  const alert = (budgetId: string, countsDigest: string, threshold = 0.5) => ({ budgetId, countsDigest, windowStartMs: 1_000, threshold });

  t.equal(await olderClaims('budget-old', 0.5), 'OK', 'an older instance fires first');
  t.equal(await claims.claim(alert('budget-old', 'd1'), end), null, 'a newer instance does not send it again');
  t.equal(await claims.claim(alert('budget-old', 'd2'), end), null, 'nor for another version: which one it fired for is not known');
  t.not(await claims.claim(alert('budget-old', 'd1', 1), end), null, 'a fraction the older instance did not claim is won');

  const won = await claims.claim(alert('budget-new', 'd1'), end);
  t.not(won, null, 'a newer instance fires first');
  t.equal(await olderClaims('budget-new', 0.5), null, 'an older instance finds it claimed and does not send it again');
  const rescoped = await claims.claim(alert('budget-new', 'd2'), end);
  t.not(rescoped, null, 'after a scope edit (another digest) a newer instance fires it again');
  await claims.release(alert('budget-new', 'd2'), rescoped!);
  t.equal(await redis.exists('relay:budget-alert:budget-new:d2:1000:0.5'), 0, 'a release gives back its own claim');
  t.equal(await olderClaims('budget-new', 0.5), null, 'not the older instances\' key another claim set');
  await claims.release(alert('budget-new', 'd1'), won!);
  t.equal(await olderClaims('budget-new', 0.5), 'OK', 'which its own release gives back');
});
