// Budgets on a real Relay: a spent budget refuses the next request before it is sent, in the
// client's wire shape (OpenAI: insufficient_quota; Anthropic: rate_limit_error), naming the budget
// and when it resets; an alert-only budget refuses nothing; token limits and model scopes; spend
// already in the usage log counts; N concurrent requests admitted under the limit over-spend by at
// most N requests' cost (measured); bad budgets are a 400 naming the field.
import t from 'tap';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
let calls = 0;
up.script((req) => {
  calls += 1;
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) };
});

const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'budget-gpt', upstreamModel: 'local-model' });
// 65 tokens at 1,000 per million: 65,000 micro-USD, $0.065 a request.
const REQUEST_COST = 0.065;
const pricing = await relay.api<any>('POST', '/api/pricings', { metadata: { displayName: 'budget test price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
if (pricing.status !== 201) throw new Error(`pricing: ${JSON.stringify(pricing.body)}`);

async function newKey(name: string): Promise<{ id: string; key: string }> {
  const res = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: name }, spec: { policyId: route.policyId } });
  return { id: res.body.relayKey.metadata.id, key: res.body.plaintext };
}

async function budget(name: string, spec: Record<string, unknown>) {
  const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec });
  if (res.status !== 201) throw new Error(`budget ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => s.byKind('budgets').has(res.body.metadata.id));
  return res.body;
}

const chat = (key: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'budget-gpt', messages: [{ role: 'user', content: 'hi' }] });
const messages = (key: string) => viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'budget-gpt', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
/** A request, and its usage event written (so its spend is counted). */
async function spend(key: string) {
  const res = await chat(key);
  if (res.status !== 200) throw new Error(`spend: ${res.status} ${res.text}`);
  await usageRecord(relay, res.headers.get('x-request-id')!);
}
await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.pricings.size === 1);

t.test('a spent money budget refuses the next request, in the client\'s shape, before it is sent', async (t) => {
  const k = await newKey('daily key');
  const b = await budget('Daily ten cents', { scope: { relayKeyId: k.id }, window: 'daily', timezone: 'UTC', limitAmount: 0.1 });
  await spend(k.key);
  await spend(k.key); // 0.13 spent: past the limit, admitted while under it
  const before = calls;
  const refused = await chat(k.key);
  t.equal(refused.status, 429);
  const body = JSON.parse(refused.text);
  t.equal(body.error.type, 'insufficient_quota', 'OpenAI clients read insufficient_quota');
  t.equal(body.error.code, 'RELAY_ERR_BUDGET_EXCEEDED');
  t.match(body.error.message, new RegExp(`Budget "Daily ten cents" \\(${b.metadata.slug}\\) is spent: 0\\.13 of 0\\.1 USD this day\\. It resets at \\d{4}-\\d{2}-\\d{2}T00:00:00\\.000Z`));
  t.ok(Number(refused.headers.get('retry-after')) > 0 && Number(refused.headers.get('retry-after')) <= 86_400, 'retry-after: until midnight UTC');
  const anthropicClient = await messages(k.key);
  t.equal(anthropicClient.status, 429);
  t.match(JSON.parse(anthropicClient.text), { type: 'error', error: { type: 'rate_limit_error', message: /Budget "Daily ten cents".*is spent/ } });
  t.equal(calls, before, 'no refused request reached the upstream');
  const record = await usageRecord(relay, refused.headers.get('x-request-id')!);
  t.match(record, { status: 429, error_code: 'RELAY_ERR_BUDGET_EXCEEDED' }, 'the refusal is logged');

  const status = await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/status`);
  t.equal(status.status, 200);
  t.match(status.body, { budgetId: b.metadata.id, spentAmount: 0.13, limitAmount: 0.1, remainingAmount: 0, currency: 'USD', exceeded: true, spentTokens: 130 });
  t.match(status.body.resetsAt, /T00:00:00\.000Z$/);
  const other = await newKey('unbudgeted key');
  t.equal((await chat(other.key)).status, 200, 'another key is not covered by this budget');
});

t.test('an alert-only budget refuses nothing', async (t) => {
  const k = await newKey('alert key');
  await budget('Alert only', { scope: { relayKeyId: k.id }, window: 'monthly', timezone: 'Europe/Paris', limitAmount: 0.01, action: 'alert' });
  await spend(k.key);
  t.equal((await chat(k.key)).status, 200);
});

t.test('a token budget on a model', async (t) => {
  const k = await newKey('token key');
  const b = await budget('Model tokens', { scope: { modelId: route.modelId }, window: { rollingDays: 7 }, limitTokens: 100 });
  try {
    // The tests above spent far more than 100 tokens on this model this week: read from the usage log.
    await eventually(async () => (await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/status`)).body.exceeded === true);
    const refused = await chat(k.key);
    t.equal(refused.status, 429);
    t.match(JSON.parse(refused.text).error.message, /of 100 tokens this 7-day window\. It resets as older spending leaves its rolling window/);
    t.equal(refused.headers.get('retry-after'), null, 'no reset time to wait for');
  } finally {
    // Disabled, so the model is usable by the tests below.
    await relay.api('PUT', `/api/budgets/by-id/${b.metadata.id}`, { spec: { enabled: false } });
    await eventually(async () => (await chat(k.key)).status === 200);
  }
});

t.test('spend already in the usage log counts once the budget reads it', async (t) => {
  const k = await newKey('history key');
  await spend(k.key);
  await spend(k.key);
  const b = await budget('Lifetime after the fact', { scope: { relayKeyId: k.id }, window: 'lifetime', limitAmount: 0.1 });
  await eventually(async () => (await relay.api<any>('GET', `/api/budgets/${b.metadata.slug}/status`)).body.spentAmount === 0.13);
  const refused = await chat(k.key);
  t.equal(refused.status, 429);
  t.match(JSON.parse(refused.text).error.message, /It resets never \(a lifetime budget\)/);
});

t.test('over-spend is bounded by the requests in flight: N concurrent requests, at most N requests\' cost', async (t) => {
  const k = await newKey('concurrent key');
  const b = await budget('Tiny', { scope: { relayKeyId: k.id }, window: 'daily', limitAmount: 0.01 });
  const N = 4;
  const results = await Promise.all(Array.from({ length: N }, () => chat(k.key)));
  t.same(results.map((r) => r.status), Array(N).fill(200), 'all admitted: nothing was spent when they started');
  for (const r of results) await usageRecord(relay, r.headers.get('x-request-id')!);
  const status = await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/status`);
  const overSpend = status.body.spentAmount - 0.01;
  t.equal(status.body.spentAmount, 0.26, 'four requests spent');
  t.ok(overSpend <= N * REQUEST_COST, `over-spend ${overSpend.toFixed(3)} <= ${N} x ${REQUEST_COST}`);
  t.equal((await chat(k.key)).status, 429, 'the next one is refused');
});

t.test('bad budgets: a 400 naming what is wrong', async (t) => {
  const k = await newKey('bad budget key');
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ scope: { relayKeyId: k.id, policyId: route.policyId }, window: 'daily', limitAmount: 1 }, /scope/],
    [{ scope: {}, window: 'daily' }, /limitAmount, limitTokens/],
    [{ window: 'daily', timezone: 'Mars/Olympus', limitAmount: 1 }, /timezone/],
    [{ window: 'hourly', limitAmount: 1 }, /window/],
    [{ window: { rollingDays: 0 }, limitAmount: 1 }, /window|rollingDays/],
    [{ window: 'daily', limitAmount: -1 }, /limitAmount/],
    [{ window: 'daily', limitAmount: 1e-320 }, /limitAmount/],
    [{ window: 'daily', limitAmount: 1, alertAt: [1.5] }, /alertAt/],
    [{ scope: { relayKeyId: '00000000-0000-4000-8000-000000000000' }, window: 'daily', limitAmount: 1 }, /relayKeyId|relay key/],
  ];
  for (const [spec, field] of cases) {
    const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: `bad ${Math.random()}` }, spec });
    t.equal(res.status, 400, JSON.stringify(spec));
    t.match(JSON.stringify(res.body), field);
  }
  const missing = await relay.api<any>('GET', '/api/budgets/no-such-budget/status');
  t.equal(missing.status, 404);
});

t.test('GET /v1/budget: a key holder reads the budgets that can refuse its requests', async (t) => {
  const k = await newKey('allowance key');
  const own = await budget('Allowance own', { scope: { relayKeyId: k.id }, window: 'weekly', limitAmount: 1 });
  const stranger = await newKey('stranger key');
  await budget('Stranger only', { scope: { relayKeyId: stranger.id }, window: 'daily', limitAmount: 1 });
  await spend(k.key);
  const res = await fetch(`${relay.inferenceUrl}/v1/budget`, { headers: { authorization: `Bearer ${k.key}` } });
  t.equal(res.status, 200);
  const body = await res.json() as { budgets: Array<Record<string, any>> };
  const mine = body.budgets.find((b) => b.id === own.metadata.id);
  t.match(mine, { slug: own.metadata.slug, window: 'weekly', action: 'refuse', spentAmount: REQUEST_COST, remainingAmount: 1 - REQUEST_COST, limitAmount: 1, exceeded: false });
  t.match(mine?.resetsAt, /T00:00:00\.000Z$/);
  t.notOk(body.budgets.some((b) => b.displayName === 'Stranger only'), "another key's budget is not shown");
  const anonymous = await fetch(`${relay.inferenceUrl}/v1/budget`);
  t.equal(anonymous.status, 401);
});
