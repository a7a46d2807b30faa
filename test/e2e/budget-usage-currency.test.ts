// Budget usage on a real Relay when a budget's scope spends in several currencies: a budget counts
// the cost in its currency only and the tokens of every currency (BudgetGuard.record,
// spend-from-log.ts), and so do its row of GET /api/usage/budgets (totals.cost) and its burn-down,
// GET /api/usage/budgets/{id}: the chart ends at the spend its status reports. The rows are sorted by
// the share of each limit spent, which compares across currencies where the costs do not.
import t from 'tap';
import { seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));

const seed = (model: string): Promise<Seeded> => seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model, upstreamModel: `${model}-upstream` });
const euro = await seed('euro-gpt');
const dollar = await seed('dollar-gpt');
// One key that may call both: one model priced in euros, the other in dollars.
const granted = await relay.api('PUT', `/api/policies/by-id/${euro.policyId}`, { spec: { tier: 'relay', modelIds: [euro.modelId, dollar.modelId] } });
if (granted.status !== 200) throw new Error(`policy: ${granted.status} ${JSON.stringify(granted.body)}`);
await relay.api('POST', '/api/pricings', { metadata: { displayName: 'in euros' }, spec: { modelId: euro.modelId, currency: 'EUR', inputPerMillion: 2000, outputPerMillion: 2000 } });
await relay.api('POST', '/api/pricings', { metadata: { displayName: 'in dollars' }, spec: { modelId: dollar.modelId, currency: 'USD', inputPerMillion: 1000, outputPerMillion: 1000 } });
const mk = async (name: string, spec: Record<string, unknown>) => {
  const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec });
  if (res.status !== 201) throw new Error(`budget ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const scope = { relayKeyId: euro.relayKeyId };
const monthlyEur = await mk('Key monthly EUR', { scope, window: 'monthly', currency: 'EUR', limitAmount: 10 });
const lifetimeEur = await mk('Key lifetime EUR', { scope, window: 'lifetime', currency: 'EUR', limitAmount: 10 });
const monthlyUsd = await mk('Key monthly USD', { scope, window: 'monthly', currency: 'USD', limitAmount: 10 });
const weeklyUsd = await mk('Key weekly USD', { scope, window: 'weekly', currency: 'USD', limitAmount: 0.5 });
await settled(relay, (s) => s.byKind('budgets').size === 4 && s.pricings.size === 2 && s.policies.get(euro.policyId)?.spec.modelIds.length === 2);

const chat = (model: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', euro.relayKey, { model, messages: [{ role: 'user', content: 'hi' }] });
// Two requests at €0.13 and three at $0.065, 65 tokens each.
for (const model of ['euro-gpt', 'euro-gpt', 'dollar-gpt', 'dollar-gpt', 'dollar-gpt']) {
  const res = await chat(model);
  if (res.status !== 200) throw new Error(`${model}: ${res.status}`);
  await usageRecord(relay, res.headers.get('x-request-id')!);
}

t.test('GET /api/usage/budgets: a row\'s cost is in its budget\'s currency; its tokens and requests count every currency', async (t) => {
  const res = await relay.api<any>('GET', '/api/usage/budgets');
  t.equal(res.status, 200);
  const row = (id: string) => res.body.budgets.find((b: any) => b.budgetId === id);
  for (const b of [monthlyEur, lifetimeEur]) {
    t.match(row(b.metadata.id), { currency: 'EUR', totals: { requests: 5, input_tokens: 250, output_tokens: 75, cost: 0.26 }, status: { spentAmount: 0.26, spentTokens: 325, currency: 'EUR' } }, b.metadata.slug);
  }
  t.match(row(monthlyUsd.metadata.id), { currency: 'USD', totals: { requests: 5, input_tokens: 250, output_tokens: 75, cost: 0.195 }, status: { spentAmount: 0.195, spentTokens: 325 } });
});

t.test('GET /api/usage/budgets: the nearest to its limit first, whatever the currency; ties by name', async (t) => {
  const res = await relay.api<any>('GET', '/api/usage/budgets');
  t.equal(res.status, 200);
  // $0.195 of $0.50 comes before €0.26 of €10, though 0.26 > 0.195; the two euro budgets tie at 0.026.
  t.same(res.body.budgets.map((b: any) => [b.displayName, b.currency, b.totals.cost, b.status.fraction]), [
    ['Key weekly USD', 'USD', 0.195, 0.39],
    ['Key lifetime EUR', 'EUR', 0.26, 0.026],
    ['Key monthly EUR', 'EUR', 0.26, 0.026],
    ['Key monthly USD', 'USD', 0.195, 0.0195],
  ]);
});

t.test('GET /api/usage/budgets/{id}: the burn-down ends at the spend in the budget\'s currency, with the tokens of every currency', async (t) => {
  for (const b of [monthlyEur, lifetimeEur, monthlyUsd, weeklyUsd]) {
    const res = await relay.api<any>('GET', `/api/usage/budgets/${b.metadata.id}`);
    t.equal(res.status, 200);
    const last = res.body.points.at(-1);
    t.equal(last.amount, res.body.status.spentAmount, `${b.metadata.slug}: the chart ends at what the budget counts`);
    t.equal(last.amount, b.spec.currency === 'EUR' ? 0.26 : 0.195, `${b.metadata.slug}: in ${b.spec.currency} only`);
    t.equal(last.tokens, 325, `${b.metadata.slug}: tokens of every currency`);
    t.equal(last.tokens, res.body.status.spentTokens);
  }
});
