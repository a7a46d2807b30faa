// Money budgets and requests Relay cannot price: such a request adds nothing to a budget's money,
// so a budget with `unpriced: refuse` refuses it (403, in the client's shape, before it is sent)
// when any binding of the model has no price in the budget's currency; a pricing in that currency
// lets it through and counts it; `allow` (the default) serves it, counts its tokens only and logs
// it once. A fallback the budget would refuse is skipped. Bad combinations are a 400.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const logLines: string[] = [];
const relay = await startRelay({ logLevel: 'warn', logStream: { write: (line) => { logLines.push(line); } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const calls: string[] = [];
/** Upstream models that answer 500 (to send a request on to its fallback). */
const failing = new Set<string>();
up.script((req) => {
  const model = String(req.json?.model);
  calls.push(model);
  if (failing.has(model)) return { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"down"}}' };
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model, inputTokens: 40, outputTokens: 10 })) };
});

/** A model on its own host, policy and key; gpt-4o is in the shipped price table, other names are not. */
const seed = (model: string, upstreamModel: string, spec: Record<string, unknown> = {}): Promise<Seeded> =>
  seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model, upstreamModel, model_spec: spec });

/** Puts `extra` models in `route`'s policy beside its own. */
async function grant(route: Seeded, ...extra: Seeded[]): Promise<void> {
  const res = await relay.api('PUT', `/api/policies/by-id/${route.policyId}`, { spec: { tier: 'relay', modelIds: [route.modelId, ...extra.map((e) => e.modelId)] } });
  if (res.status !== 200) throw new Error(`policy: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => s.policies.get(route.policyId)?.spec.modelIds.length === 1 + extra.length);
}

async function budget(name: string, spec: Record<string, unknown>) {
  const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec });
  if (res.status !== 201) throw new Error(`budget ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => s.byKind('budgets').has(res.body.metadata.id));
  return res.body;
}

const chat = (route: Seeded, model: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model, messages: [{ role: 'user', content: 'hi' }] });
const messages = (route: Seeded, model: string) => viaRelay(relay, '/vendor-b/v1/messages', route.relayKey, { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

t.test('unpriced: refuse refuses a model without a price in the budget\'s currency, until it has one', async (t) => {
  const priced = await seed('refuse-gpt', 'gpt-4o');
  const house = await seed('refuse-house', 'acme-house-7b');
  await grant(priced, house);
  const b = await budget('Team cap', { scope: { policyId: priced.policyId }, window: 'monthly', limitAmount: 100, unpriced: 'refuse' });

  t.equal((await chat(priced, 'refuse-gpt')).status, 200, 'a model the table prices is served');
  const before = calls.length;
  const refused = await chat(priced, 'refuse-house');
  t.equal(refused.status, 403);
  const body = JSON.parse(refused.text);
  t.match(body.error, { type: 'permission_error', code: 'RELAY_ERR_BUDGET_UNPRICED' }, 'an OpenAI client reads a permission error');
  t.match(body.error.message, new RegExp(`Budget "Team cap" \\(${b.metadata.slug}\\) caps spending in USD and refuses what it cannot count: the model \`refuse-house\` has no price on host \\S+ \\(upstream model acme-house-7b\\)`));
  const anthropicClient = await messages(priced, 'refuse-house');
  t.equal(anthropicClient.status, 403);
  t.match(JSON.parse(anthropicClient.text), { type: 'error', error: { type: 'permission_error', message: /cannot count: the model `refuse-house` has no price/ } });
  t.equal(calls.length, before, 'no refused request reached the upstream');
  t.match(await usageRecord(relay, refused.headers.get('x-request-id')!), { status: 403, error_code: 'RELAY_ERR_BUDGET_UNPRICED', model_slug: 'refuse-house' }, 'the refusal is logged');

  const eur = await relay.api<any>('POST', '/api/pricings', { metadata: { displayName: 'house in euros' }, spec: { modelId: house.modelId, currency: 'EUR', inputPerMillion: 1000, outputPerMillion: 1000 } });
  t.equal(eur.status, 201);
  await settled(relay, (s) => s.pricings.has(eur.body.metadata.id));
  const stillRefused = await chat(priced, 'refuse-house');
  t.equal(stillRefused.status, 403, 'a price in another currency cannot count toward a USD budget');
  t.match(JSON.parse(stillRefused.text).error.message, /the model `refuse-house` is priced in EUR, not USD, on host/);

  const usd = await relay.api<any>('PUT', `/api/pricings/by-id/${eur.body.metadata.id}`, { spec: { modelId: house.modelId, currency: 'USD', inputPerMillion: 1000, outputPerMillion: 1000 } });
  t.equal(usd.status, 200, 'the pricing is changed to USD');
  await settled(relay, (s) => s.pricings.get(eur.body.metadata.id)?.spec.currency === 'USD');
  const served = await chat(priced, 'refuse-house');
  t.equal(served.status, 200, 'priced in USD, it is served');
  t.match(await usageRecord(relay, served.headers.get('x-request-id')!), { cost: 0.05, currency: 'USD' }, '50 tokens at 1,000 per million');
  const status = await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/status`);
  t.ok(status.body.spentAmount >= 0.05, `and counted toward the budget (${status.body.spentAmount} USD)`);
});

t.test('a premium mode the request keeps needs its own figure under unpriced: refuse', async (t) => {
  const house = await seed('premium-house', 'acme-premium-7b');
  await budget('Premium cap', { scope: { policyId: house.policyId }, window: 'monthly', limitAmount: 100, unpriced: 'refuse' });
  const pricing = await relay.api<any>('POST', '/api/pricings', { metadata: { displayName: 'premium house' }, spec: { modelId: house.modelId, currency: 'USD', inputPerMillion: 1000, outputPerMillion: 1000 } });
  t.equal(pricing.status, 201);
  await settled(relay, (s) => s.pricings.has(pricing.body.metadata.id));
  const priority = () => viaRelay(relay, '/vendor-a/v1/chat/completions', house.relayKey, { model: 'premium-house', service_tier: 'priority', messages: [{ role: 'user', content: 'hi' }] });

  t.equal((await chat(house, 'premium-house')).status, 200, 'at the standard speed it is counted and served');
  const before = calls.length;
  const refused = await priority();
  t.equal(refused.status, 403, refused.text);
  t.match(JSON.parse(refused.text).error, { code: 'RELAY_ERR_BUDGET_UNPRICED', message: /the model `premium-house` has no price for "priority" \(the premium mode this request asks for\).*modifiers\.priority/ });
  t.equal(calls.length, before, 'the refused request never reached the upstream');

  const standard = await relay.api<any>('PUT', `/api/policies/by-id/${house.policyId}`, { spec: { tier: 'relay', modelIds: [house.modelId], fastModes: 'standard' } });
  t.equal(standard.status, 200, JSON.stringify(standard.body));
  await settled(relay, (s) => s.policies.get(house.policyId)?.spec.fastModes === 'standard');
  t.equal((await priority()).status, 200, "sent at the standard speed by the key's policy, it is counted at the standard rates");
  await relay.api('PUT', `/api/policies/by-id/${house.policyId}`, { spec: { tier: 'relay', modelIds: [house.modelId], fastModes: 'allow' } });
  await settled(relay, (s) => s.policies.get(house.policyId)?.spec.fastModes === 'allow');

  const figured = await relay.api<any>('PUT', `/api/pricings/by-id/${pricing.body.metadata.id}`, { spec: { modelId: house.modelId, currency: 'USD', inputPerMillion: 1000, outputPerMillion: 1000, modifiers: { priority: 2 } } });
  t.equal(figured.status, 200, JSON.stringify(figured.body));
  await settled(relay, (s) => s.pricings.get(pricing.body.metadata.id)?.spec.modifiers?.priority === 2);
  t.equal((await priority()).status, 200, 'with a figure for priority it is served');
});

t.test('every enabled binding must be priced: failover may reach any of them', async (t) => {
  const route = await seed('two-hosts', 'gpt-4o');
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'two-hosts', upstreamModel: 'acme-mirror-of-4o' });
  await budget('Two hosts', { scope: { modelId: route.modelId }, window: 'daily', limitAmount: 5, unpriced: 'refuse' });
  const refused = await chat(route, 'two-hosts');
  t.equal(refused.status, 403);
  t.match(JSON.parse(refused.text).error.message, /\(upstream model acme-mirror-of-4o\)/, 'the unpriced binding is named');
});

t.test('unpriced: allow (the default) serves it, counts its tokens only, and says so once in the log', async (t) => {
  const route = await seed('allow-house', 'acme-allow-7b');
  const b = await budget('Money and tokens', { scope: { policyId: route.policyId }, window: 'daily', limitAmount: 1, limitTokens: 10_000 });
  t.equal(b.spec.unpriced, 'allow', 'the default');
  for (let i = 0; i < 2; i++) {
    const res = await chat(route, 'allow-house');
    t.equal(res.status, 200);
    t.match(await usageRecord(relay, res.headers.get('x-request-id')!), { cost: null });
  }
  const status = await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/status`);
  t.match(status.body, { spentAmount: 0, spentTokens: 100 }, 'tokens counted, no money');
  const warned = logLines.filter((line) => line.includes(`a request counted toward no money in budget ${b.metadata.slug}`));
  t.equal(warned.length, 1, 'logged once for the budget and model, not per request');
  t.match(JSON.parse(warned[0]!), { level: 40, budget: b.metadata.slug, model: 'allow-house' });
});

t.test('a fallback that a budget would refuse is skipped for the next, and the record says why', async (t) => {
  const house = await seed('fb-house', 'acme-fallback-7b');
  const backup = await seed('fb-backup', 'gpt-4o');
  const main = await seed('fb-main', 'gpt-4o-mini', { fallbacks: [{ modelId: house.modelId }, { modelId: backup.modelId }] });
  await grant(main, house, backup);
  await budget('Fallback cap', { scope: { policyId: main.policyId }, window: 'daily', limitAmount: 5, unpriced: 'refuse' });
  failing.add('gpt-4o-mini');
  t.teardown(() => failing.delete('gpt-4o-mini'));
  const before = calls.length;
  const res = await chat(main, 'fb-main');
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-served-model'), 'fb-backup');
  t.same(calls.slice(before), ['gpt-4o-mini', 'gpt-4o'], 'the unpriced fallback was never sent');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'fb-main', outcome: 'server_error' }, { model: 'fb-house', outcome: 'budget' }, { model: 'fb-backup' }]);
});

t.test('unpriced: refuse needs a money limit that refuses', async (t) => {
  for (const spec of [
    { window: 'daily', limitTokens: 100, unpriced: 'refuse' },
    { window: 'daily', limitAmount: 1, action: 'alert', unpriced: 'refuse' },
  ]) {
    const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'bad' }, spec });
    t.equal(res.status, 400, JSON.stringify(spec));
    t.match(JSON.stringify(res.body), /unpriced/, 'the error names the field');
    t.match(JSON.stringify(res.body), /set limitAmount and action refuse/);
  }
  const bogus = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'bogus' }, spec: { window: 'daily', limitAmount: 1, unpriced: 'sometimes' } });
  t.equal(bogus.status, 400);
});
