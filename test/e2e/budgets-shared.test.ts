// A budget across three Relay instances sharing only Postgres (catalog and usage log, no Valkey):
// spend served by one instance is read by the others from the shared usage log within
// budgets.reconcileMs, and each of them then refuses the next request.
import t from 'tap';
import { createTestDatabase, DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const RECONCILE_MS = 300;
const db = await createTestDatabase();
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const masterKey = (await import('../../core/crypto/sealing.ts')).generateMasterKey();
const start = () => startRelay({
  database: db.url, masterKey, plugins: [...DEFAULT_TEST_PLUGINS, { use: 'log-postgres' }], config: { budgets: { reconcileMs: RECONCILE_MS } },
});
const relays: TestRelay[] = [await start(), await start(), await start()];
const [a, b, c] = relays;
t.teardown(async () => {
  for (const r of relays) await r.close();
  await up.close();
  await db.drop();
});

t.test('spend on one instance is refused on the others once read from the shared usage log', async (t) => {
  const put = await a.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' });
  t.equal(put.status, 200);
  await eventually(async () => (await Promise.all(relays.map((r) => r.api<any>('GET', '/api/settings/usage-logging')))).every((r) => r.body?.backend === 'postgres'));
  const route = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'shared-gpt', upstreamModel: 'local-model' });
  const pricing = await a.api('POST', '/api/pricings', { metadata: { displayName: 'shared price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  t.equal(pricing.status, 201);
  const budget = await a.api<any>('POST', '/api/budgets', { metadata: { displayName: 'Shared' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'daily', limitAmount: 0.1 } });
  t.equal(budget.status, 201);
  await eventually(() => relays.every((r) => r.relay.sync.snapshot().byKind('budgets').has(budget.body.metadata.id)
    && r.relay.sync.snapshot().relayKeys.has(route.relayKeyId) && r.relay.sync.snapshot().pricings.size === 1));
  const chat = (on: TestRelay) => viaRelay(on, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'shared-gpt', messages: [{ role: 'user', content: 'hi' }] });

  // $0.065 a request: two on A spend $0.13 of the $0.10.
  for (let i = 0; i < 2; i++) {
    const res = await chat(a);
    t.equal(res.status, 200);
    await usageRecord(a, res.headers.get('x-request-id')!);
  }
  t.equal((await chat(a)).status, 429, 'A refuses: it counted its own requests');
  for (const [name, other] of [['B', b], ['C', c]] as const) {
    const waited = await eventually(async () => (await other.api<any>('GET', `/api/budgets/${budget.body.metadata.id}/status`)).body.spentAmount >= 0.13, 5_000, 50);
    t.ok(waited <= 5_000, `${name} read the spend from the usage log in ${waited} ms (reconcile every ${RECONCILE_MS} ms)`);
    const refused = await chat(other);
    t.equal(refused.status, 429, `${name} refuses`);
    t.match(JSON.parse(refused.text).error, { type: 'insufficient_quota', code: 'RELAY_ERR_BUDGET_EXCEEDED' });
  }
});
