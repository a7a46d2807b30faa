// A budget counted in Valkey, edited through the admin API on two Relay instances sharing Postgres
// (the catalog) and Valkey, each with its own usage log: an edit of its scope counts the new
// scope's spend on both (read from the usage logs and shared through Valkey), not the old scope's
// shared total; an edit of its name and limit keeps the shared total (the other instance's log
// alone could not say it).
import t from 'tap';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const REDIS_URL = 'redis://127.0.0.1:6379/10';
const flush = new Redis(REDIS_URL);
await flush.flushdb();
await flush.quit();
const db = await createTestDatabase();
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const masterKey = generateMasterKey();
// An hour between reconciles: after its first read, only Valkey carries spend between instances.
const start = () => startRelay({ database: db.url, masterKey, config: { valkey: { url: REDIS_URL }, budgets: { reconcileMs: 3_600_000 } } });
const relays: TestRelay[] = [await start(), await start()];
const [a, b] = relays as [TestRelay, TestRelay];
t.teardown(async () => {
  for (const r of relays) await r.close();
  await up.close();
  await db.drop();
});

const route = await seedRoute(a, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'edit-gpt', upstreamModel: 'local-model' });
// $0.065 a request (65 tokens at 1,000 per million).
await a.api('POST', '/api/pricings', { metadata: { displayName: 'edit price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });

async function newKey(name: string) {
  const res = await a.api<any>('POST', '/api/relay-keys', { metadata: { displayName: name }, spec: { policyId: route.policyId } });
  const id = res.body.relayKey.metadata.id as string;
  for (const r of relays) await settled(r, (s) => s.relayKeys.has(id) && s.pricings.size === 1);
  return { id, key: res.body.plaintext as string };
}

const chat = async (on: TestRelay, key: string) => {
  const res = await viaRelay(on, '/vendor-a/v1/chat/completions', key, { model: 'edit-gpt', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200);
  await usageRecord(on, res.headers.get('x-request-id')!);
};

const spent = async (on: TestRelay, budgetId: string): Promise<number> => (await on.api<any>('GET', `/api/budgets/${budgetId}/status`)).body.spentAmount;

/** The spend both instances read once it is `expected` (bounded), for the assertions to compare. */
async function spentOnBoth(budgetId: string, expected: number): Promise<[number, number]> {
  // Both read on every try: an instance's first read of a new version starts when its status is asked.
  await eventually(async () => (await Promise.all([spent(a, budgetId), spent(b, budgetId)])).every((s) => s === expected), 20_000, 50).catch(() => undefined);
  return [await spent(a, budgetId), await spent(b, budgetId)];
}

async function edit(budgetId: string, body: Record<string, unknown>, applied: (spec: any, displayName: string) => boolean) {
  const res = await a.api('PUT', `/api/budgets/by-id/${budgetId}`, body);
  t.equal(res.status, 200, 'the edit is stored');
  for (const r of relays) await settled(r, (s) => { const bud = s.byKind('budgets').get(budgetId) as any; return bud && applied(bud.spec, bud.metadata.displayName); });
}

t.test('a scope edit counts the new scope\'s spend on every instance; a name and limit edit keeps the shared total', async (t) => {
  const keyA = await newKey('scope A');
  const keyB = await newKey('scope B');
  // B's spend before the edit: in instance b's usage log only.
  await chat(b, keyB.key);
  const created = await a.api<any>('POST', '/api/budgets', { metadata: { displayName: 'edited' }, spec: { scope: { relayKeyId: keyA.id }, window: 'daily', limitAmount: 10 } });
  t.equal(created.status, 201);
  const budgetId = created.body.metadata.id as string;
  for (const r of relays) await settled(r, (s) => s.byKind('budgets').has(budgetId));
  await chat(a, keyA.key);
  await chat(a, keyA.key);
  t.same(await spentOnBoth(budgetId, 0.13), [0.13, 0.13], 'A\'s two requests, on both (b through Valkey: its log has none of them)');

  await edit(budgetId, { metadata: { displayName: 'renamed' }, spec: { limitAmount: 20 } }, (spec, name) => spec.limitAmount === 20 && name === 'renamed');
  t.same(await spentOnBoth(budgetId, 0.13), [0.13, 0.13], 'a name and limit edit keeps the shared total');

  await edit(budgetId, { spec: { scope: { relayKeyId: keyB.id } } }, (spec) => spec.scope.relayKeyId === keyB.id);
  t.same(await spentOnBoth(budgetId, 0.065), [0.065, 0.065], 'scope B\'s one request (in b\'s log), not scope A\'s $0.13');
  await chat(a, keyA.key);
  await chat(a, keyB.key);
  t.same(await spentOnBoth(budgetId, 0.13), [0.13, 0.13], 'then B\'s requests count, A\'s do not');
});
