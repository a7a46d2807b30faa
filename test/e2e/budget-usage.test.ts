// Usage grouped by budget on a real Relay: GET /api/usage/budgets gives each budget the usage
// log's totals over its scope in its current window (or a window given), the nearest to its limit first;
// GET /api/usage/budgets/{id} is one budget's burn-down and its projection to the window's end.
import t from 'tap';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'usage-gpt', upstreamModel: 'local-model' });
await relay.api('POST', '/api/pricings', { metadata: { displayName: 'price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
const other = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: 'other' }, spec: { policyId: route.policyId } });
const mk = async (name: string, spec: Record<string, unknown>) => (await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec })).body;
const keyBudget = await mk('Key monthly', { scope: { relayKeyId: route.relayKeyId }, window: 'monthly', limitAmount: 1 });
const everything = await mk('Everything daily', { window: 'daily', limitAmount: 20, action: 'alert' });
const lifetime = await mk('Other key lifetime', { scope: { relayKeyId: other.body.relayKey.metadata.id }, window: 'lifetime', limitTokens: 1000 });
await settled(relay, (s) => s.byKind('budgets').size === 3 && s.pricings.size === 1 && s.relayKeys.size === 2);

const chat = (key: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'usage-gpt', messages: [{ role: 'user', content: 'hi' }] });
for (let i = 0; i < 3; i++) await usageRecord(relay, (await chat(route.relayKey)).headers.get('x-request-id')!);
await usageRecord(relay, (await chat(other.body.plaintext)).headers.get('x-request-id')!);

t.test('GET /api/usage/budgets: each budget\'s scope and window, the nearest to its limit first', async (t) => {
  const res = await relay.api<any>('GET', '/api/usage/budgets');
  t.equal(res.status, 200);
  // Spent over limit: 0.195 of $1, 65 of 1000 tokens, then the costliest, the farthest from its $20 limit.
  // What each budget counts is what the log holds: "Everything daily", which only alerts, is first read at its first request's end and counts it once.
  t.same(res.body.budgets.map((b: any) => [b.slug, b.totals.requests, b.totals.cost, b.status.spentAmount, b.status.spentTokens]), [
    [keyBudget.metadata.slug, 3, 0.195, 0.195, 195], [lifetime.metadata.slug, 1, 0.065, 0.065, 65], [everything.metadata.slug, 4, 0.26, 0.26, 260],
  ]);
  t.ok(res.body.budgets[2].status.fraction < 0.065, `the costliest is the farthest from its limit (${res.body.budgets[2].status.fraction})`);
  const key = res.body.budgets.find((b: any) => b.budgetId === keyBudget.metadata.id);
  t.match(key, { scope: { relayKeyId: route.relayKeyId }, window: 'monthly', enabled: true, to: null, totals: { input_tokens: 150, output_tokens: 45 }, status: { spentAmount: 0.195, limitAmount: 1 } });
  t.match(key.from, /-01T00:00:00\.000Z$/, 'from the start of the month');
  const windowed = await relay.api<any>('GET', '/api/usage/budgets?since=1h');
  t.ok(windowed.body.budgets.every((b: any) => Date.parse(b.from) > Date.now() - 3_700_000), 'a window given applies to every budget');
  const bad = await relay.api<any>('GET', '/api/usage/budgets?since=soon');
  t.equal(bad.status, 400);
  t.equal(bad.body.error.field, 'since');
  t.equal((await relay.api<any>('GET', '/api/usage/budgets?groupBy=model')).status, 400, 'an unknown parameter is named, not ignored');
});

t.test('GET /api/usage/budgets/{id}: the burn-down ends at what was spent; the projection scales it to the window\'s end', async (t) => {
  const res = await relay.api<any>('GET', `/api/usage/budgets/${keyBudget.metadata.id}`);
  t.equal(res.status, 200);
  t.equal(res.body.bucketSeconds, 21_600, 'a month in 6-hour buckets');
  t.equal(res.body.points.at(-1).amount, 0.195);
  t.equal(res.body.points.at(-1).tokens, 195);
  t.equal(res.body.to, res.body.status.resetsAt, 'charted to the window\'s end');
  const { status, projection } = res.body;
  const elapsed = Date.now() - Date.parse(status.windowStart);
  const length = Date.parse(status.resetsAt) - Date.parse(status.windowStart);
  t.ok(Math.abs(projection.amount - 0.195 * length / elapsed) / projection.amount < 0.01, `projected ${projection.amount} USD at ${projection.at}`);
  t.equal(projection.at, status.resetsAt);
  const life = await relay.api<any>('GET', `/api/usage/budgets/${lifetime.metadata.slug}`);
  t.equal(life.status, 200);
  t.equal(life.body.projection, null, 'a lifetime budget has no end to project to');
  t.equal(life.body.points.at(-1).tokens, 65);
  const missing = await relay.api<any>('GET', '/api/usage/budgets/no-such-budget');
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'RELAY_ERR_NOT_FOUND');
});
