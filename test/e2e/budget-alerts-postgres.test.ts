// Budget alerts from two Relay instances sharing only Postgres (no Valkey): each instance alone
// counts enough of its own requests to cross every fraction, so both try to fire each alert at
// once; the budget_alerts row's unique key lets one through, and the webhook hears each once.
import t from 'tap';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const db = await createTestDatabase();
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const hooks = await startWebhookReceiver();
const masterKey = generateMasterKey();
const start = () => startRelay({ database: db.url, masterKey, config: { budgets: { alerts: { attempts: 2, retryBaseMs: 50, timeoutMs: 2_000 } } } });
const relays: TestRelay[] = [await start(), await start()];
const [a] = relays as [TestRelay, TestRelay];
t.teardown(async () => {
  for (const r of relays) await r.close();
  await up.close();
  await hooks.close();
  await db.drop();
});

t.test('two instances both crossing each fraction: one alert each, through the database', async (t) => {
  const route = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'alert-pg-gpt', upstreamModel: 'local-model' });
  await a.api('POST', '/api/pricings', { metadata: { displayName: 'price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  const budget = await a.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'Postgres alerts' },
    spec: { scope: { relayKeyId: route.relayKeyId }, window: 'daily', limitAmount: 0.1, action: 'alert', alertAt: [0.25, 0.5, 1], alertWebhooks: [{ url: `${hooks.url}/pg`, format: 'json' }] },
  });
  t.equal(budget.status, 201);
  const id = budget.body.metadata.id as string;
  await eventually(() => relays.every((r) => r.relay.sync.snapshot().byKind('budgets').has(id) && r.relay.sync.snapshot().relayKeys.has(route.relayKeyId) && r.relay.sync.snapshot().pricings.size === 1));
  const chat = (on: TestRelay) => viaRelay(on, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'alert-pg-gpt', messages: [{ role: 'user', content: 'hi' }] });
  // Four at once on each ($0.26 per instance, of $0.10): each instance alone passes 100%.
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(relays[i % 2]!).then((res) => ({ res, on: relays[i % 2]! }))));
  t.ok(answers.every(({ res }) => res.status === 200));
  await Promise.all(answers.map(({ res, on }) => usageRecord(on, res.headers.get('x-request-id')!)));
  await eventually(() => hooks.on('/pg').length >= 3, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 800));
  t.same(hooks.on('/pg').map((h) => h.body.threshold).sort(), [0.25, 0.5, 1], 'each fraction reached the webhook once');
  const alerts = await a.api<any>('GET', `/api/budgets/${id}/alerts`);
  t.equal(alerts.body.alerts.length, 3);
});
