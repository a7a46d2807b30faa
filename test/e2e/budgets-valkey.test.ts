// A budget across three Relay instances sharing Valkey, each with its own usage log (log-file in
// its own data directory) and a reconcile far off: what one instance spends is refused by the
// others within a second, through the shared total alone; and with requests in flight on all
// three at once, the over-spend stays within the bound (the cost of the requests in flight).
import t from 'tap';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/12';
const flush = new Redis(REDIS_URL);
await flush.flushdb();
await flush.quit();
const db = await createTestDatabase();
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const masterKey = generateMasterKey();
// An hour between reads of the usage log: only Valkey can carry spend between instances here.
const start = () => startRelay({ database: db.url, masterKey, config: { valkey: { url: REDIS_URL }, budgets: { reconcileMs: 3_600_000 } } });
const relays: TestRelay[] = [await start(), await start(), await start()];
const [a, b, c] = relays;
t.teardown(async () => {
  for (const r of relays) await r.close();
  await up.close();
  await db.drop();
});

const route = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'valkey-gpt', upstreamModel: 'local-model' });
// $0.065 a request (65 tokens at 1,000 per million).
const REQUEST_COST = 0.065;
await a.api('POST', '/api/pricings', { metadata: { displayName: 'valkey price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });

async function keyWithBudget(name: string, limitAmount: number) {
  const key = await a.api<any>('POST', '/api/relay-keys', { metadata: { displayName: name }, spec: { policyId: route.policyId } });
  const budget = await a.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec: { scope: { relayKeyId: key.body.relayKey.metadata.id }, window: 'daily', limitAmount } });
  if (budget.status !== 201) throw new Error(JSON.stringify(budget.body));
  await eventually(() => relays.every((r) => r.relay.sync.snapshot().byKind('budgets').has(budget.body.metadata.id)
    && r.relay.sync.snapshot().relayKeys.has(key.body.relayKey.metadata.id) && r.relay.sync.snapshot().pricings.size === 1));
  return { key: key.body.plaintext as string, budgetId: budget.body.metadata.id as string };
}

const chat = (on: TestRelay, key: string) => viaRelay(on, '/vendor-a/v1/chat/completions', key, { model: 'valkey-gpt', messages: [{ role: 'user', content: 'hi' }] });

t.test('spend on A is refused on B and C through Valkey alone', async (t) => {
  const { key, budgetId } = await keyWithBudget('valkey shared', 0.1);
  for (let i = 0; i < 2; i++) {
    const res = await chat(a, key);
    t.equal(res.status, 200);
    await usageRecord(a, res.headers.get('x-request-id')!);
  }
  for (const [name, other] of [['B', b], ['C', c]] as const) {
    const waited = await eventually(async () => (await other.api<any>('GET', `/api/budgets/${budgetId}/status`)).body.spentAmount >= 0.13, 3_000, 50);
    t.ok(waited < 3_000, `${name} sees A's spend after ${waited} ms`);
    const refused = await chat(other, key);
    t.equal(refused.status, 429, `${name} refuses`);
  }
});

t.test('over-spend with requests in flight on three instances is at most their cost', async (t) => {
  const { key, budgetId } = await keyWithBudget('valkey concurrent', 0.01);
  const inFlight = 6;
  const answers = await Promise.all(Array.from({ length: inFlight }, (_, i) => chat(relays[i % 3]!, key)));
  const admitted = answers.filter((r) => r.status === 200);
  for (const r of admitted) await usageRecord(relays[answers.indexOf(r) % 3]!, r.headers.get('x-request-id')!);
  await eventually(async () => (await b.api<any>('GET', `/api/budgets/${budgetId}/status`)).body.spentAmount >= admitted.length * REQUEST_COST - 1e-9, 3_000, 50);
  const status = await b.api<any>('GET', `/api/budgets/${budgetId}/status`);
  const overSpend = status.body.spentAmount - 0.01;
  t.ok(overSpend <= inFlight * REQUEST_COST + 1e-9, `over-spend ${overSpend.toFixed(3)} USD <= ${inFlight} in flight x ${REQUEST_COST}`);
  t.equal(status.body.spentAmount, Math.round(admitted.length * REQUEST_COST * 1e6) / 1e6, 'every admitted request is counted once, across the three');
  for (const on of relays) t.equal((await chat(on, key)).status, 429, 'then every instance refuses');
});
