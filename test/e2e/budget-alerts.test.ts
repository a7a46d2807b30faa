// Budget alerts on a real Relay, to a real webhook receiver: each alertAt fraction fires once per
// window (concurrent requests crossing it included), in Relay's JSON shape and Slack's
// incoming-webhook shape; a failing receiver is retried with backoff, then recorded failed; the
// alerts are readable at GET /api/budgets/{id}/alerts; a viewer never sees a webhook URL's secret
// path, nor does the log.
import t from 'tap';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const logLines: string[] = [];
const relay = await startRelay({
  config: { budgets: { alerts: { attempts: 3, retryBaseMs: 100, timeoutMs: 2_000 } } },
  logLevel: 'info', logStream: { write: (line) => { logLines.push(line); } },
});
const up = await startFakeUpstream();
const hooks = await startWebhookReceiver();
t.teardown(async () => {
  await relay.close();
  await up.close();
  await hooks.close();
});
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));

const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'alert-gpt', upstreamModel: 'local-model' });
// $0.065 a request (65 tokens at 1,000 per million).
await relay.api('POST', '/api/pricings', { metadata: { displayName: 'alert price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.pricings.size === 1);

// Slack-like secrets in the paths: what a viewer, the alerts API and the log must never show.
const SLACK_PATH = '/services/T0SECRET/B0SECRET/slackSecretToken123';
const JSON_PATH = '/hooks/jsonSecretToken456';

async function newKey(name: string) {
  const res = await relay.api<any>('POST', '/api/relay-keys', { metadata: { displayName: name }, spec: { policyId: route.policyId } });
  return { id: res.body.relayKey.metadata.id as string, key: res.body.plaintext as string };
}

async function budget(name: string, spec: Record<string, unknown>) {
  const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: name }, spec });
  if (res.status !== 201) throw new Error(`budget ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => s.byKind('budgets').has(res.body.metadata.id));
  return res.body;
}

const chat = (key: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'alert-gpt', messages: [{ role: 'user', content: 'hi' }] });
const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let alertedBudgetId = '';

t.test('each fraction fires once per window, to a JSON and a Slack webhook, with concurrent requests crossing it', async (t) => {
  const k = await newKey('alerted key');
  const b = await budget('Team alerts', {
    scope: { relayKeyId: k.id }, window: 'daily', limitAmount: 0.2, action: 'alert', alertAt: [0.5, 0.8, 1],
    alertWebhooks: [{ url: hooks.url + JSON_PATH, format: 'json' }, { url: hooks.url + SLACK_PATH, format: 'slack' }],
  });
  alertedBudgetId = b.metadata.id;
  // Eight at once ($0.52): every fraction is crossed by requests finishing together.
  const answers = await Promise.all(Array.from({ length: 8 }, () => chat(k.key)));
  t.same(answers.map((a) => a.status), Array(8).fill(200), 'an alert-only budget refuses nothing');
  for (const a of answers) await usageRecord(relay, a.headers.get('x-request-id')!);
  // More spend in the same window fires nothing new.
  for (let i = 0; i < 3; i++) await usageRecord(relay, (await chat(k.key)).headers.get('x-request-id')!);
  await eventually(() => hooks.on(JSON_PATH).length >= 3 && hooks.on(SLACK_PATH).length >= 3, 5_000);
  await quiet(500);

  const json = hooks.on(JSON_PATH);
  t.equal(json.length, 3, 'three fractions, three JSON alerts');
  t.same(json.map((h) => h.body.threshold).sort(), [0.5, 0.8, 1], 'one per fraction');
  t.match(json[0]!.body, {
    type: 'relay.budget.alert', budget: { id: b.metadata.id, slug: b.metadata.slug, displayName: 'Team alerts', window: 'daily', action: 'alert' },
    status: { budgetId: b.metadata.id, limitAmount: 0.2, currency: 'USD' }, message: /Relay budget "Team alerts"/,
  });
  t.ok(json.every((h) => h.body.status.fraction >= h.body.threshold), 'each fired once its fraction was reached');
  const slack = hooks.on(SLACK_PATH);
  t.equal(slack.length, 3, 'three Slack alerts');
  for (const s of slack) {
    t.same(Object.keys(s.body), ['text'], 'Slack\'s incoming-webhook shape: {"text": ...}');
    t.match(s.body.text, new RegExp(`^Relay budget "Team alerts" \\(${b.metadata.slug}\\) passed (50|80|100)% of its limit: \\d\\.\\d+ of 0\\.2 USD spent today`));
  }

  const recorded = async () => (await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/alerts`)).body.alerts ?? [];
  await eventually(async () => (await recorded()).filter((a: any) => a.status === 'delivered').length >= 3, 5_000);
  const alerts = await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/alerts`);
  t.equal(alerts.status, 200);
  t.equal(alerts.body.alerts.length, 3, 'three alerts recorded');
  t.same(alerts.body.alerts.map((a: any) => a.threshold), [1, 0.8, 0.5], 'the latest first');
  for (const a of alerts.body.alerts) {
    t.equal(a.status, 'delivered');
    t.same(a.deliveries.map((d: any) => [d.target, d.format, d.status, d.attempts]), [[`${hooks.url}/…`, 'json', 'delivered', 1], [`${hooks.url}/…`, 'slack', 'delivered', 1]]);
  }
  t.notOk(JSON.stringify(alerts.body).includes('SecretToken'), 'the alerts API shows webhook origins only');
  const bySlug = await relay.api<any>('GET', `/api/budgets/${b.metadata.slug}/alerts?limit=1`);
  t.equal(bySlug.body.alerts.length, 1, 'by slug, and limited');

  // Beside the request log: every budget's alerts, filtered by status and time.
  const logged = await relay.api<any>('GET', '/api/logs/alerts?status=delivered');
  t.equal(logged.status, 200);
  const ours = logged.body.alerts.filter((a: any) => a.budgetId === b.metadata.id);
  // Fractions crossed by one request fire together, so only the firing times are ordered.
  t.same(ours.map((a: any) => [a.budgetSlug, a.threshold]).sort((x: any, y: any) => y[1] - x[1]), [[b.metadata.slug, 1], [b.metadata.slug, 0.8], [b.metadata.slug, 0.5]], 'in the logs API, with the budget\'s slug');
  const fired = ours.map((a: any) => Date.parse(a.firedAt));
  t.ok(fired.every((at: number, i: number) => i === 0 || at <= fired[i - 1]), 'the latest fired first');
  t.notOk(JSON.stringify(logged.body).includes('SecretToken'), 'webhook origins only there too');
  t.same((await relay.api<any>('GET', '/api/logs/alerts?status=failed')).body.alerts.filter((a: any) => a.budgetId === b.metadata.id), [], 'filtered by status');
  t.same((await relay.api<any>('GET', `/api/logs/alerts?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.alerts, [], 'and by time');
  t.equal((await relay.api<any>('GET', '/api/logs/alerts?status=lost')).status, 400, 'an unknown status is a 400');
});

t.test('a failing receiver is retried with backoff, then the alert is recorded failed', async (t) => {
  const failing = '/hooks/alwaysFailingSecret789';
  hooks.answer(failing, 500);
  const k = await newKey('failing key');
  const b = await budget('Failing hook', { scope: { relayKeyId: k.id }, window: 'monthly', limitTokens: 100, alertAt: [0.5], alertWebhooks: [{ url: hooks.url + failing, format: 'json' }] });
  await usageRecord(relay, (await chat(k.key)).headers.get('x-request-id')!);
  await eventually(async () => (await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/alerts`)).body.alerts[0]?.status === 'failed', 5_000);
  const tries = hooks.on(failing);
  t.equal(tries.length, 3, 'three attempts (budgets.alerts.attempts)');
  const gaps = tries.slice(1).map((h, i) => h.at - tries[i]!.at);
  t.ok(gaps[0]! >= 90 && gaps[1]! >= 190, `backoff doubles: waited ${gaps.join(', ')} ms`);
  const [alert] = (await relay.api<any>('GET', `/api/budgets/${b.metadata.id}/alerts`)).body.alerts;
  t.match(alert, { threshold: 0.5, status: 'failed', spentTokens: 65, deliveries: [{ status: 'failed', attempts: 3, lastError: 'HTTP 500', deliveredAt: null }] });
  const warned = logLines.filter((l) => l.includes('a budget alert webhook failed'));
  t.equal(warned.length, 1, 'the failure is logged once');
  t.notOk(logLines.some((l) => l.includes('SecretToken') || l.includes('FailingSecret')), 'no log line holds a webhook URL\'s secret');
});

t.test('a viewer sees webhook origins only; an admin sees the URL they set', async (t) => {
  await relay.api('POST', '/api/users', { username: 'vic', password: 'viewer password 123', role: 'viewer' });
  const login = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vic', password: 'viewer password 123' }) });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const asViewer = async (path: string) => (await fetch(relay.controlUrl + path, { headers: { cookie } })).text();
  for (const path of [`/api/budgets/${alertedBudgetId}`, '/api/budgets', `/api/budgets/${alertedBudgetId}/alerts`]) {
    const text = await asViewer(path);
    t.notOk(text.includes('SecretToken'), `GET ${path} shows a viewer no secret`);
  }
  const seen = JSON.parse(await asViewer(`/api/budgets/${alertedBudgetId}`));
  t.same(seen.spec.alertWebhooks, [{ url: `${hooks.url}/…`, format: 'json' }, { url: `${hooks.url}/…`, format: 'slack' }], 'the origin and format stay visible');
  const admin = await relay.api<any>('GET', `/api/budgets/${alertedBudgetId}`);
  t.equal(admin.body.spec.alertWebhooks[1].url, hooks.url + SLACK_PATH, 'the admin reads the URL to edit it');
});

t.test('a bad webhook is a 400 naming the field, without echoing the URL', async (t) => {
  const res = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'bad hook' }, spec: { window: 'daily', limitAmount: 1, alertWebhooks: [{ url: 'ftp://example.com/secretPart', format: 'json' }] } });
  t.equal(res.status, 400);
  t.match(res.body.error, { field: '/spec/alertWebhooks/0/url', message: /http:\/\/ or https:\/\// });
  t.notOk(JSON.stringify(res.body).includes('secretPart'));
  const format = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'bad format' }, spec: { window: 'daily', limitAmount: 1, alertWebhooks: [{ url: 'https://example.com/x', format: 'teams' }] } });
  t.equal(format.status, 400);
  t.match(format.body.error.field, /alertWebhooks/);
});
