// The dashboard shows routing (issue 42 item 6), in headless Chromium against the real server: a
// model's page shows its fallback chain and retry policy, and a request's log detail shows each
// attempt (model moved on from and why, each upstream try with its outcome and wait).
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { buildDashboard } from '../support/dashboard-build.ts';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, faults } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const CHROMIUM = process.env.RELAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const USERNAME = 'admin';
const PASSWORD = 'e2e-routing-password';

if (!existsSync(CHROMIUM)) {
  t.test(`dashboard routing: no Chromium at ${CHROMIUM}; apt-get install -y chromium (or set RELAY_TEST_CHROMIUM)`, { skip: true }, () => {});
} else {
  t.test('dashboard routing', { timeout: 170_000 }, run);
}

async function run(t: Test) {
  const dashboardRoot = buildDashboard(t);
  const relay = await startRelay({
    plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'admin-ui', options: { root: dashboardRoot } }],
    env: { RELAY_ADMIN_USERNAME: USERNAME, RELAY_ADMIN_PASSWORD: PASSWORD },
    database: 'pglite',
  });
  t.teardown(() => relay.close());
  const primaryUp = await startFakeUpstream();
  const backupUp = await startFakeUpstream();
  t.teardown(async () => { await primaryUp.close(); await backupUp.close(); });
  // The backup's binding sends a name Relay's context-window table knows (core/context-windows).
  const backup = await seedRoute(relay, { baseUrl: `${backupUp.url}/v1`, adapter: 'openai', model: 'ui-backup', upstreamModel: 'gpt-4o-2024-08-06' });
  const primary = await seedRoute(relay, { baseUrl: `${primaryUp.url}/v1`, adapter: 'openai', model: 'ui-primary' });
  await relay.api('PUT', `/api/policies/by-id/${primary.policyId}`, { spec: { modelIds: [primary.modelId, backup.modelId] } });
  const put = await relay.api('PUT', `/api/models/by-id/${primary.modelId}`, {
    spec: { fallbacks: [{ modelId: backup.modelId, on: ['server_error', 'timeout'] }], retry: { attemptsPerBinding: 2, backoff: { initialMs: 50, jitter: 0 }, deadlineMs: 20_000 } },
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  await settled(relay, (s) => s.relayKeys.has(primary.relayKeyId) && s.policies.get(primary.policyId)?.spec.modelIds.length === 2
    && s.models.get(primary.modelId)?.spec.retry?.attemptsPerBinding === 2 && s.hostKeysOfHost(primary.hostId).length === 1 && s.hostKeysOfHost(backup.hostId).length === 1);

  // Both tries of the primary fail (500, then 502): the request falls back to the backup model.
  primaryUp.enqueue(faults.serverError({ vendor: 'openai', status: 500 }));
  primaryUp.enqueue(faults.serverError({ vendor: 'openai', status: 502 }));
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', primary.relayKey, { model: 'ui-primary', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200, res.text);
  const requestId = res.headers.get('x-request-id')!;
  await usageRecord(relay, requestId);

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.setDefaultTimeout(15_000);

  await page.goto(`${relay.controlUrl}/catalog/models/${primary.modelId}`);
  await page.waitForSelector('#username');
  await page.fill('#username', USERNAME);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');

  await t.test("the model page shows the fallback chain and the retry policy", async (t) => {
    const card = await page.waitForSelector('section[aria-label="Routing"]');
    await page.waitForSelector('section[aria-label="Routing"] .fallback-chain a:has-text("ui-backup")');
    const text = (await card.textContent()) ?? '';
    t.match(text, /ui-backup/, 'the fallback, by name');
    t.match(text, /on server_error, timeout/, 'with the conditions it takes');
    t.match(text, /Tries per binding\s*2/, 'the retry policy');
    t.match(text, /50 ms ×2/, 'its backoff');
    t.match(text, /20000 ms/, 'its deadline');
    t.match(text, /408, 429, 5xx \(default\)/, 'defaults named as such');
    t.match(text, /Context window\s*unknown: no routing by prompt size/, 'no window known for its upstream model');
  });

  await t.test("a model page shows the window Relay's table gives its binding's upstream model, and from where", async (t) => {
    await page.goto(`${relay.controlUrl}/catalog/models/${backup.modelId}`);
    await page.waitForSelector('section[aria-label="Routing"] dd:has-text("128,000 tokens")');
    const text = (await (await page.waitForSelector('section[aria-label="Routing"]')).textContent()) ?? '';
    t.match(text, /128,000 tokens \(Relay's table: gpt-4o-2024-08-06 as gpt-4o, from the vendor's page\)/);
    const href = await page.getAttribute('section[aria-label="Routing"] dd a', 'href');
    t.match(href, /^https:\/\/learn\.microsoft\.com\//, 'the page the number was read from');
  });

  await t.test("a log's detail shows every attempt and why it moved on", async (t) => {
    await page.goto(`${relay.controlUrl}/logs/${encodeURIComponent(requestId)}`);
    // On a timeout, what the page showed instead says why.
    const card = await page.waitForSelector('section[aria-label="Attempts"]').catch(async (err: Error) => {
      throw new Error(`${err.message}\nthe page showed: ${(await page.textContent('body').catch(() => null))?.slice(0, 600)}`);
    });
    const text = (await card.textContent()) ?? '';
    t.match(text, /ui-primary — moved on: server_error/, 'the model moved on from, and why');
    t.match(text, /ui-backup — answered/);
    const rows = await page.$$eval('section[aria-label="Attempts"] tbody tr', (trs) => trs.map((tr) => (tr as unknown as { textContent: string }).textContent));
    t.equal(rows.length, 3, 'three upstream attempts');
    t.match(rows[0], /ui-primary.*server.*500.*50 ms/, 'the first try, its status and the wait');
    t.match(rows[1], /ui-primary.*server.*502/);
    t.match(rows[2], /ui-backup.*answered.*200/);
  });
  t.same(pageErrors, [], 'no script errors');
}
