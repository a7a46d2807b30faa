// Budget alerts after an edit, on a real Relay to a real webhook receiver: an edit of what the
// budget counts (here its scope) starts a new spend, whose fractions alert afresh in the same
// window, with the new scope's spend (not the old scope's, which the budget holds until its first
// read of the new one answers); an edit of the limit keeps the fractions already sent, and fires
// only those it newly reaches. With the embedded database alone, and with Valkey (shared spend,
// alerts claimed there).
import t, { type Test } from 'tap';
import { eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const REDIS_URL = process.env.RELAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const up = await startFakeUpstream();
const hooks = await startWebhookReceiver();
t.teardown(async () => {
  await up.close();
  await hooks.close();
});
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));

async function editedBudgetAlerts(t: Test, relay: TestRelay, hook: string): Promise<void> {
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'edit-gpt', upstreamModel: 'local-model' });
  // $0.065 a request (65 tokens at 1,000 per million).
  await relay.api('POST', '/api/pricings', { metadata: { displayName: 'edit price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  const newKey = async (name: string) => {
    const res = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: name }, spec: { policyId: route.policyId } });
    return { id: res.body.relayKey.metadata.id as string, key: res.body.plaintext as string };
  };
  const spend = async (key: string) => {
    const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'edit-gpt', messages: [{ role: 'user', content: 'hi' }] });
    t.equal(answer.status, 200, 'served');
    await usageRecord(relay, answer.headers.get('x-request-id')!);
  };

  // A request that finishes while a budget's read of the usage log is under way may count twice until
  // the next reconcile (budget-guard.ts): the amounts below hold either way.
  const first = await newKey('first team');
  const second = await newKey('second team');
  const created = await relay.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'Edited alerts' },
    spec: { scope: { relayKeyId: first.id }, window: 'daily', limitAmount: 0.3, action: 'alert', alertAt: [0.5, 1], alertWebhooks: [{ url: `${hooks.url}${hook}`, format: 'json' }] },
  });
  t.equal(created.status, 201);
  const id = created.body.metadata.id as string;
  const edit = async (spec: Record<string, unknown>) => {
    const res = await relay.api<any>('PUT', `/api/budgets/by-id/${id}`, { spec });
    t.equal(res.status, 200, `edited: ${JSON.stringify(spec)}`);
    await settled(relay, (s) => (s.byKind('budgets').get(id) as any)?.metadata.updatedAt === res.body.metadata.updatedAt);
  };
  await settled(relay, (s) => s.byKind('budgets').has(id) && s.relayKeys.has(second.id) && s.pricings.size === 1);
  const status = async () => (await relay.api<any>('GET', `/api/budgets/${id}/status`)).body;
  const alerts = async () => ((await relay.api<any>('GET', `/api/budgets/${id}/alerts`)).body.alerts ?? []) as any[];
  const sent = () => hooks.on(hook).map((h) => h.body.threshold as number);

  // The first team spends $0.195 (or $0.26 counted twice) of $0.30: 0.5 fires, 1 does not.
  for (let i = 0; i < 3; i++) await spend(first.key);
  await eventually(() => sent().length === 1);
  t.same(sent(), [0.5], 'the first scope crossed 0.5');

  // The budget now covers the second team: what it counts, and so its alerts, start afresh.
  await edit({ scope: { relayKeyId: second.id } });
  // Counted while the budget still holds the first team's spend (its first read of the new scope under way): no alert on that.
  await spend(second.key);
  await eventually(async () => (await status()).spentAmount < 0.2, 10_000);
  // The second team's own spend reaches 0.5 of the limit ($0.15) within two more requests.
  for (let i = 0; i < 2 && (await status()).fraction < 0.5; i++) await spend(second.key);
  t.ok((await status()).fraction >= 0.5, 'the second team\'s spend passed 0.5');
  await eventually(() => sent().length === 2);
  t.same(sent(), [0.5, 0.5], 'the second scope\'s spend crossed 0.5: it fires again in the same window');
  const refired = hooks.on(hook)[1]!.body;
  t.ok(refired.status.spentAmount < 0.25, `on the second team's spend (${refired.status.spentAmount}), not with the first team's $0.195 added`);
  t.same(refired.budget.scope, { relayKeyId: second.id }, 'under the new scope');

  // A higher limit ($0.40): one more request passes 0.5 of it, already sent in this window: nothing fires.
  await edit({ limitAmount: 0.4 });
  await spend(second.key);
  t.ok((await status()).fraction >= 0.5, 'past 0.5 of the raised limit');
  // Then a lower one ($0.25): the next request's spend reaches 1 for the first time: 1 fires, 0.5 does not again.
  await edit({ limitAmount: 0.25 });
  await spend(second.key);
  t.ok((await status()).fraction >= 1, 'past the lowered limit');
  await eventually(async () => (await alerts()).filter((a) => a.status === 'delivered').length >= 3);
  const recorded = await alerts();
  t.same(recorded.map((a) => a.threshold), [1, 0.5, 0.5], 'three alerts recorded: 0.5 under each scope, then 1');
  t.same(sent(), [0.5, 0.5, 1], 'the limit edits sent only the fraction newly reached');
  t.equal(new Set(recorded.map((a) => a.windowStart)).size, 1, 'all in the same window');
}

t.test('embedded database: a scope edit alerts afresh on the new scope\'s spend; a limit edit re-fires nothing already sent', async (t) => {
  const relay = await startRelay({ config: { budgets: { alerts: { attempts: 2, retryBaseMs: 50, timeoutMs: 2_000 } } } });
  t.teardown(() => relay.close());
  await editedBudgetAlerts(t, relay, '/embedded');
});

t.test('Valkey: the same, claimed in Valkey per version', async (t) => {
  const relay = await startRelay({ config: { valkey: { url: REDIS_URL }, budgets: { alerts: { attempts: 2, retryBaseMs: 50, timeoutMs: 2_000 } } } });
  t.teardown(() => relay.close());
  await editedBudgetAlerts(t, relay, '/valkey');
});
