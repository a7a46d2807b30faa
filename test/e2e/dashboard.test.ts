// The dashboard end to end, in headless Chromium against the real server: sign in, build a
// route through the UI (provider, host, model, policy, host key, relay key), switch payload
// logging on, send a request through the inference port, then find it in the logs, open its
// captured body, and see it in the usage charts. Screenshots of each page go to test/.output/.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildDashboard } from '../support/dashboard-build.ts';
import { eventually, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const CHROMIUM = process.env.RELAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUTPUT = path.join(ROOT, 'test/.output/dashboard');
const USERNAME = 'admin';
const PASSWORD = 'e2e-dashboard-password';

if (!existsSync(CHROMIUM)) {
  t.test(`dashboard end to end: no Chromium at ${CHROMIUM}; apt-get install -y chromium (or set RELAY_TEST_CHROMIUM)`, { skip: true }, () => {});
} else {
  t.test('dashboard end to end', { timeout: 170_000 }, run);
}

async function run(t: Test) {
  const dashboardRoot = buildDashboard(t);
  mkdirSync(OUTPUT, { recursive: true });

  const upstream = await startFakeUpstream({ chunks: 4, text: 'Hello from the fake upstream.', inputTokens: 21, outputTokens: 7 });
  t.teardown(() => upstream.close());
  const relay = await startRelay({
    // Only what the test touches: one wire shape, one vendor, usage and payload backends, the dashboard.
    plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'payload-file' }, { use: 'admin-ui', options: { root: dashboardRoot } }],
    env: { RELAY_ADMIN_USERNAME: USERNAME, RELAY_ADMIN_PASSWORD: PASSWORD },
  });
  t.teardown(() => relay.close());
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.setDefaultTimeout(15_000);
  const base = relay.controlUrl;
  const shot = (name: string, fullPage = true) => page.screenshot({ path: path.join(OUTPUT, `${name}.png`), fullPage });
  /** Waits for a selector; on failure saves a screenshot named after the step, for the post-mortem. */
  const expectVisible = async (selector: string, step: string, timeout?: number) => {
    try {
      return await page.waitForSelector(selector, { timeout });
    } catch (err) {
      await shot(`FAILED-${step}`).catch(() => undefined);
      throw err;
    }
  };
  /** Fills and submits the open form; returns the new entity's id from the URL it lands on. */
  const submitAndGetId = async (kind: string): Promise<string> => {
    await page.click('form button[type=submit]');
    await page.waitForURL(new RegExp(`/catalog/${kind}/[0-9a-f-]{36}$`));
    return page.url().split('/').pop()!;
  };

  await t.test('a deep link asks to sign in, then opens the page', async (t) => {
    await page.goto(`${base}/catalog/providers`);
    await page.waitForSelector('#username');
    await shot('01-sign-in', false);
    await page.fill('#username', USERNAME);
    await page.fill('#password', 'wrong-password-here');
    await page.click('button[type=submit]');
    await page.waitForSelector('.banner-error');
    t.match(await page.textContent('.banner-error'), /Wrong username or password/, 'bad credentials are said plainly');
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:text("Providers")');
    t.equal(new URL(page.url()).pathname, '/catalog/providers', 'the deep link is kept');
    // The heading shows before the list has loaded: wait for the empty state, not just look.
    t.ok(await page.waitForSelector('text=No providers yet', { timeout: 5000 }).then(() => true, () => false), 'an empty catalog has an empty state');
    await shot('02-providers-empty');
  });

  const ids: Record<string, string> = {};

  await t.test('create provider, host, model and policy through the forms', async (t) => {
    await page.click('text=New provider');
    await page.fill('#f-displayName', 'Fake OpenAI');
    // This Relay loads vendor-openai only: the form says before saving that an adapter it lacks is refused.
    await page.fill('#f-adapter', 'anthropic');
    const warning = await expectVisible('#f-adapter-warning', 'adapter-warning');
    t.match(await warning.textContent(), /no adapter anthropic loaded \(it has openai\)/, 'an adapter this instance has not loaded is flagged');
    t.match(await warning.textContent(), /Relay refuses it/, 'and the form says it will be refused');
    await page.click('form button[type=submit]');
    const refused = await expectVisible('[data-field="f-adapter"] .field-error', 'adapter-refused');
    t.match(await refused.textContent(), /loaded adapters: openai/, 'the server\'s refusal sits under the field');
    await shot('02b-provider-adapter-warning', false);
    t.same(await page.$$eval('#f-adapter-options option', (options) => options.map((o) => o.getAttribute('value'))), ['openai'], 'the suggestions are the loaded adapters');
    await page.fill('#f-adapter', 'openai');
    await page.waitForSelector('#f-adapter-warning', { state: 'detached' });
    ids.provider = await submitAndGetId('providers');
    await page.waitForSelector('text=Created provider');
    t.pass('a created entity is confirmed');

    // A provider stored before its plugin left this instance's config (the API refuses new ones).
    const elsewhere = await relay.relay.store.create('providers', { displayName: 'Served elsewhere' }, { adapter: 'anthropic' });
    await page.click('nav >> text=Providers');
    const flagged = await expectVisible('tr:has-text("Served elsewhere") .badge:has-text("not loaded here")', 'adapter-badge');
    t.ok(flagged, 'the list flags a provider whose adapter this instance has not loaded');
    t.notOk(await page.isVisible('tr:has-text("Fake OpenAI") .badge:has-text("not loaded here")'), 'and not the others');
    t.equal((await relay.api('DELETE', `/api/providers/by-id/${elsewhere.metadata.id}`)).status, 204);

    await page.click('nav >> text=Hosts');
    await page.click('text=New host');
    await page.fill('#f-displayName', 'Fake upstream');
    await page.selectOption('#f-providerId', ids.provider);
    await page.fill('#f-baseUrl', 'ftp://not-http');
    await page.click('form button[type=submit]');
    const error = await page.waitForSelector('[data-field="f-baseUrl"] .field-error');
    t.match(await error.textContent(), /pattern|http/i, 'the server\'s validation message sits under the field it names');
    await shot('03-host-validation');
    await page.fill('#f-baseUrl', `${upstream.url}/v1`);
    ids.host = await submitAndGetId('hosts');

    await page.click('nav >> text=Models');
    await page.click('text=New model');
    await page.fill('#f-displayName', 'Fake GPT');
    await page.fill('#f-slug', 'fake-gpt');
    await page.fill('#f-contextWindow', '128000');
    await page.click('text=Add binding');
    await page.selectOption('[aria-label="Binding 1 host"]', ids.host);
    await page.fill('[aria-label="Binding 1 upstream model"]', 'gpt-fake');
    await shot('04-model-form');
    ids.model = await submitAndGetId('models');

    await page.click('nav >> text=Policies');
    await page.click('text=New policy');
    await page.fill('#f-displayName', 'E2E policy');
    await page.check('label.check:has-text("Fake GPT") input');
    await page.check('#f-payloadLoggingEnabled');
    await page.selectOption('#f-fastModes', 'standard');
    ids.policy = await submitAndGetId('policies');
    const policy = await relay.api('GET', `/api/policies/${ids.policy}`);
    t.same(policy.body.spec.modelIds, [ids.model], 'the policy grants the model chosen in the checklist');
    t.equal(policy.body.spec.payloadLoggingEnabled, true, 'and opts into payload capture');
    t.equal(policy.body.spec.fastModes, 'standard', 'and runs fast-mode requests at the standard speed');

    await page.click('nav >> text=Models');
    await page.waitForSelector('td:has-text("Fake upstream → gpt-fake")');
    await shot('05-models-list');
  });

  /** The relay keys' or host keys' list's "Last used" column, counted from 1 as :nth-child counts. */
  const lastUsedColumn = async () => 1 + (await page.$$eval('thead th', (ths) => ths.map((th) => th.textContent))).indexOf('Last used');
  await t.test('a stored host key is write-only and its health shows', async (t) => {
    await page.click('nav >> text=Host keys');
    await page.click('text=New host key');
    await page.fill('#f-displayName', 'Fake key');
    await page.selectOption('#f-hostId', ids.host);
    await page.selectOption('#f-valueFrom-kind', 'stored');
    await page.fill('#f-value', 'sk-upstream-e2e');
    ids.hostKey = await submitAndGetId('host-keys');
    await page.waitForSelector('text=A value is stored');
    t.equal(await page.inputValue('#f-value'), '', 'the stored value is never shown back');
    await page.waitForSelector('.health-detail .badge');
    await shot('06-host-key');
    await page.click('nav >> text=Host keys');
    await page.waitForSelector('td .badge');
    t.match(await page.textContent('tbody tr'), /healthy|unknown/, 'the list shows each key\'s health');
    const cell = `tbody tr:has-text("Fake key") > :nth-child(${await lastUsedColumn()})`;
    await page.waitForSelector(`${cell}:not(:text-is("…"))`);
    t.equal(await page.textContent(cell), 'never', 'no request was sent with the key yet');
    await shot('07-host-keys-list');
  });

  let plaintext = '';
  await t.test('a relay key is shown once, with a warning', async (t) => {
    await page.click('nav >> text=Relay keys');
    await page.click('text=New relay key');
    await page.fill('#f-displayName', 'E2E key');
    await page.selectOption('#f-policyId', ids.policy);
    await page.click('form button[type=submit]');
    const input = await page.waitForSelector('[data-testid=relay-key-plaintext]');
    plaintext = await input.inputValue();
    t.ok(plaintext.length >= 32, 'the plaintext is in the dialog');
    t.match(await page.textContent('dialog[open]'), /will not be shown again/, 'with a warning that it is shown once');
    await shot('08-relay-key-plaintext', false);
    await page.click('text=I have copied the key');
    await page.waitForURL(/\/catalog\/relay-keys\/[0-9a-f-]{36}$/);
    ids.relayKey = page.url().split('/').pop()!;
    t.notMatch(await page.content(), new RegExp(plaintext.slice(-16)), 'the plaintext is gone from the page');
    await shot('09-relay-key-page');
  });

  await t.test('the relay keys list shows each key\'s expiry', async (t) => {
    await page.click('nav >> text=Relay keys');
    await page.waitForSelector('th:text("Expires")');
    const row = await page.textContent('tbody tr:has-text("E2E key")');
    t.match(row, /never/, 'a key without expiresAt never expires, and says so');
    const cell = `tbody tr:has-text("E2E key") > :nth-child(${await lastUsedColumn()})`;
    await page.waitForSelector(`${cell}:not(:text-is("…"))`);
    t.equal(await page.textContent(cell), 'never', 'nor has it been used yet');
  });

  await t.test('payload logging is switched on in Settings', async (t) => {
    await page.click('nav >> text=Settings');
    await page.waitForSelector('#payload-enabled');
    t.match(await page.textContent('#payload-logging-title + .explain'), /both/, 'the capture gate is explained');
    await page.check('#payload-enabled');
    await page.click('form[aria-labelledby="payload-logging-title"] button[type=submit]');
    await expectVisible('form[aria-labelledby="payload-logging-title"] .saved', 'settings-saved');
    const setting = await relay.api('GET', '/api/settings/payload-logging');
    t.equal(setting.body.enabled, true, 'the setting is saved');
    t.ok(await page.isVisible('.plugin-list >> text=admin-ui'), 'loaded plugins come from /config.json');
    await shot('10-settings');
  });

  let requestId = '';
  await t.test('a request through the inference port', async (t) => {
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-gpt', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Say hello to the dashboard' }] }),
    });
    await res.text();
    t.equal(res.status, 200, 'the relay key created in the UI routes to the model created in the UI');
    requestId = res.headers.get('x-request-id') ?? '';
    t.ok(requestId, 'the response names its request id');
    await page.click('nav >> text=Relay keys');
    await page.waitForSelector('th:text("Last used")');
    const cell = `tbody tr:has-text("E2E key") > :nth-child(${await lastUsedColumn()})`;
    await page.waitForSelector(`${cell}:not(:text-is("…"))`);
    t.match(await page.textContent(cell), /^(now|\d+ seconds? ago)$/, 'the relay keys list says the key was just used');
    await page.click('nav >> text=Host keys');
    await page.waitForSelector('th:text("Health")');
    const hostKeyCell = `tbody tr:has-text("Fake key") > :nth-child(${await lastUsedColumn()})`;
    await page.waitForSelector(`${hostKeyCell}:not(:text-is("…"))`);
    t.match(await page.textContent(hostKeyCell), /^(now|\d+ seconds? ago)$/, 'the host keys list says the key was just sent upstream');
  });

  await t.test('the request is in the logs, with its captured body', async (t) => {
    await page.click('nav >> text=Logs');
    const deadline = Date.now() + 20_000;
    while (!(await page.isVisible('.table-logs tbody tr'))) {
      if (Date.now() > deadline) throw new Error('the request never appeared in the logs');
      await page.waitForTimeout(400);
      await page.click('button:text("Refresh")');
      await page.waitForSelector('button:text("Refresh"):not([disabled])');
    }
    t.match(await page.textContent('.table-logs tbody tr'), /fake-gpt/, 'the newest row is the request');
    t.match(await page.textContent('.table-logs tbody tr'), /unpriced/, 'fake-gpt has no pricing and is not in the price table: its cost is a visible gap');
    await shot('11-logs');
    await page.selectOption('#filter-status', '>=400');
    await page.waitForSelector('text=No requests match these filters');
    t.match(page.url(), /status=%3E%3D400/, 'filters live in the URL');
    await page.selectOption('#filter-status', '');
    await page.waitForSelector('.table-logs tbody tr');

    await page.click('.table-logs tbody tr:first-child .row-link');
    await page.waitForURL(/\/logs\/.+/);
    const shownId = decodeURIComponent(page.url().split('/logs/')[1]);
    if (requestId) t.equal(shownId, requestId, 'the detail page is at /logs/<request id>');
    await expectVisible('section[aria-label="Request body"]', 'log-detail-body', 20_000);
    t.match(await page.textContent('section[aria-label="Request body"]'), /Say hello to the dashboard/, 'the captured request body is shown');
    t.match(await page.textContent('section[aria-label="Response body"]'), /SSE|Hello/, 'and the streamed response');
    await shot('12-log-detail');

    await page.goto(`${base}/logs/${encodeURIComponent(shownId)}`);
    await page.waitForSelector('section[aria-label="Request body"]');
    t.pass('a reload of the deep link opens the same request');
  });

  await t.test('the request is in the usage totals and charts', async (t) => {
    await page.goto(`${base}/usage?since=1h&bucket=5m`);
    await page.waitForSelector('[data-testid=total-requests]');
    await page.locator('[data-testid=total-requests]', { hasText: /^1$/ }).waitFor();
    t.equal(await page.textContent('[data-testid=total-requests]'), '1', 'one request in the last hour');
    await page.waitForSelector('.chart-host canvas');
    t.equal(await page.locator('.chart').count(), 4, 'requests, tokens, errors and cost charts');
    t.match(await page.textContent('.chart .u-legend'), /Requests/, 'the chart has a legend');
    await shot('13-usage');
    await page.click('button[role=radio]:text("By model")');
    await page.waitForSelector('.chart .u-legend >> text=Fake GPT');
    t.pass('grouped by model, the series is named after the model');
    await shot('14-usage-by-model');
    t.equal(await page.textContent('[data-testid=total-cost]'), 'unpriced', 'an unpriced model\'s cost is a visible gap, as in the logs, not $0.00');
    t.match(await page.textContent('.table tbody tr:has-text("Fake GPT")'), /unpriced/);
  });

  await t.test('the logs list: the key\'s name, the error code, auto-refresh and a CSV export', async (t) => {
    await page.goto(`${base}/logs`);
    await page.waitForSelector('.table-logs tbody tr');
    t.match(await page.textContent('.table-logs tbody tr:first-child'), /E2E key/, 'the key column names the relay key');
    await page.check('#logs-auto-refresh');
    // A refused request (a model the key does not reach) appears without a click on Refresh.
    const refused = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const code = (await refused.json() as { error: { code: string } }).error.code;
    t.match(code, /^RELAY_ERR_/);
    await expectVisible(`.table-logs tbody tr:first-child .error-code:text("${code}")`, 'logs-auto-refresh', 20_000);
    t.pass('auto-refresh brought the refused request in, with its error code');
    await page.uncheck('#logs-auto-refresh');
    await shot('14c-logs-error-code');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:text("Export CSV")')]);
    t.match(download.suggestedFilename(), /^relay-logs-.*\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    t.match(csv[0], /^started_at,request_id,status,error_code,model,relay_key,/);
    t.equal(csv.length, 3, 'a header and the two requests');
    t.match(csv[1], new RegExp(`,4\\d\\d,${code},no-such-model,E2E key,`));
    t.match(csv[2], /,200,,fake-gpt,E2E key,/);
  });

  await t.test('the Sessions page: the request had no agent session, so it lists none', async (t) => {
    await page.click('nav >> text=Sessions');
    await page.waitForURL(/\/sessions$/);
    await page.waitForSelector('text=No agent sessions in this window');
    t.pass('the Sessions page answers from GET /api/usage/sessions');
    await shot('14b-sessions');
  });

  await t.test('the Budgets page: create a budget with a webhook, see its burn-down, then its alert', async (t) => {
    const hooks = await startWebhookReceiver();
    t.teardown(() => hooks.close());
    await page.click('nav >> text=Budgets');
    await page.waitForURL(/\/budgets$/);
    await page.waitForSelector('text=No budgets yet');
    await page.click('text=New budget');
    await page.waitForURL(/\/catalog\/budgets\/new$/);
    await page.fill('#f-displayName', 'E2E tokens');
    await page.selectOption('#f-scope-relayKeyId', ids.relayKey);
    await page.selectOption('#f-window', 'daily');
    // 28 tokens a request: the first (before the budget) is 56% of 50; the next takes it past 100%.
    await page.fill('#f-limitTokens', '50');
    await page.fill('#f-alertAt', '0.5, 1');
    await page.click('#f-alertWebhooks');
    await page.fill('[aria-label="Webhook 1 URL"]', `${hooks.url}/slack/T0/B0/e2eSecret`);
    await page.selectOption('[aria-label="Webhook 1 format"]', 'slack');
    await shot('14c-budget-form');
    ids.budget = await submitAndGetId('budgets');
    const stored = await relay.api('GET', `/api/budgets/${ids.budget}`);
    t.match(stored.body.spec, { scope: { relayKeyId: ids.relayKey }, window: 'daily', limitTokens: 50, alertAt: [0.5, 1], action: 'refuse', unpriced: 'allow', alertWebhooks: [{ url: `${hooks.url}/slack/T0/B0/e2eSecret`, format: 'slack' }] }, 'the form saved what was typed, as numbers');

    await page.click('text=Burn-down and alerts');
    await page.waitForURL(new RegExp(`/budgets/${ids.budget}$`));
    await expectVisible('figure[aria-label="Burn-down"] canvas', 'budget-burn-down');
    await expectVisible('.stat:has-text("Spent"):has-text("28 of 50 tokens")', 'budget-spent');
    t.match(await page.textContent('.stats'), /Projected by then/, 'the projection to the window\'s end is shown');
    t.match(await page.textContent('figure[aria-label="Burn-down"] .u-legend'), /Spent.*Projected.*Limit/s, 'spent, projected and limit lines');
    await page.waitForSelector('text=No alerts yet');

    // Spend after the budget exists crosses 50% and 100%: two alerts, each reaching the webhook once.
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'Spend some budget' }] }),
    });
    await res.text();
    t.equal(res.status, 200);
    const deadline = Date.now() + 15_000;
    while (hooks.received.length < 2 && Date.now() < deadline) await page.waitForTimeout(100);
    t.same(hooks.received.map((h) => Object.keys(h.body)), [['text'], ['text']], 'two Slack messages');
    await page.click('button:text("Refresh")');
    await expectVisible('.table-alerts tbody tr:nth-child(2)', 'budget-alerts');
    t.match(await page.textContent('.table-alerts'), /100%.*delivered.*50%.*delivered/s, 'the alerts are listed, the latest first, delivered');
    t.notMatch(await page.textContent('.table-alerts'), /e2eSecret/, 'the webhook shows by its origin only');
    await shot('14d-budget');

    await page.click('text=← Budgets');
    await page.waitForURL(/\/budgets$/);
    const row = await expectVisible('.table-budgets tr:has-text("E2E tokens")', 'budgets-list');
    t.match(await row.textContent(), /spent/, 'the budget is past its limit');
    t.equal(await page.getAttribute('.table-budgets tr:has-text("E2E tokens") [role=meter]', 'aria-valuenow'), '112', '56 of 50 tokens: 112%');
    await shot('14e-budgets');
    // The remaining steps send no more requests through this key; the budget goes, so nothing else sees it.
    t.equal((await relay.api('DELETE', `/api/budgets/by-id/${ids.budget}`)).status, 204);
  });

  await t.test('a cheap model: the Cost chart\'s y axis is as wide as its labels', async (t) => {
    // 21 input and 7 output tokens at these prices cost $0.000021: ticks like "$0.000015".
    const priced = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'cheap' }, spec: { modelId: ids.model, inputPerMillion: 0.5, outputPerMillion: 1.5 } });
    t.equal(priced.status, 201, JSON.stringify(priced.body));
    await eventually(() => relay.relay.sync.snapshot().pricings.size === 1);
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'An expensive hello' }] }),
    });
    await res.text();
    t.equal(res.status, 200);
    // Usage is written off the request path: the page reads the window once, so it loads after the write.
    await eventually(async () => (await relay.api('GET', '/api/usage/summary?since=1h')).body.totals.cost > 0);
    await page.goto(`${base}/usage?since=1h&bucket=5m`);
    await page.locator('[data-testid=total-cost]', { hasText: '$0.000021' }).waitFor();
    await page.waitForSelector('figure[aria-label="Cost"] .u-over');
    // In the page (a string: the tests compile without the DOM's types).
    const fit = await page.evaluate<{ axis: number; label: number }>(`(() => {
      const plot = document.querySelector('figure[aria-label="Cost"] .u-over');
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif'; // uPlot's axis font
      return { axis: plot.offsetLeft, label: ctx.measureText('$0.000015').width };
    })()`);
    t.ok(fit.axis > fit.label, `the plot starts right of a "$0.000015" label (${fit.axis} px > ${fit.label.toFixed(1)} px)`);
    await shot('14f-usage-small-cost');
  });

  await t.test('a model priced in EUR after USD: the window, the model\'s row and the session give each currency\'s cost', async (t) => {
    // One Claude Code session, one turn at the USD price and one at the EUR price.
    const turn = async () => {
      const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json', 'x-claude-code-session-id': 'two-currencies' },
        body: JSON.stringify({ model: 'fake-gpt', messages: [{ role: 'user', content: 'An expensive hello' }] }),
      });
      await res.text();
      t.equal(res.status, 200);
    };
    await turn();
    const pricing = (await relay.api('GET', '/api/pricings')).body.items[0];
    const eur = await relay.api('PUT', `/api/pricings/by-id/${pricing.metadata.id}`, { spec: { modelId: ids.model, currency: 'EUR', inputPerMillion: 2, outputPerMillion: 6 } });
    t.equal(eur.status, 200, JSON.stringify(eur.body));
    await eventually(() => [...relay.relay.sync.snapshot().pricings.values()].some((p) => p.spec.currency === 'EUR'));
    await turn();
    await eventually(async () => (await relay.api('GET', '/api/usage/summary?since=1h')).body.costs.length === 2);
    // 21 input and 7 output tokens: $0.000021 a turn in USD (two in the window), €0.000084 in EUR.
    await page.goto(`${base}/usage?since=1h&bucket=5m&groupBy=model`);
    await page.locator('[data-testid=total-cost]', { hasText: '€' }).waitFor();
    t.equal(await page.textContent('[data-testid=total-cost]'), '€0.000084 · $0.000042', 'the window: each currency\'s amount, the costliest first');
    const row = page.locator('.table tbody tr:has-text("Fake GPT") td.num').last();
    t.equal(await row.textContent(), '€0.000084 · $0.000042', 'the model\'s row: its cost in each currency, not a blank');
    await shot('14g-usage-two-currencies');
    await page.goto(`${base}/sessions/two-currencies`);
    const cost = page.locator('.stat:has(.stat-label:text-is("Cost")) .stat-value');
    await cost.waitFor();
    t.equal(await cost.textContent(), '€0.000084 · $0.000021', 'the session: its cost in each currency, not "mixed"');
    await shot('14h-session-two-currencies');
    await page.goto(`${base}/sessions`);
    const listed = page.locator('.table tbody tr:has-text("two-currencies") td.num').nth(3); // turns, tokens, cache hits, cost
    await listed.waitFor();
    t.equal(await listed.textContent(), '€0.000084 · $0.000021', 'the sessions list: the same amounts');
    const sessionRow = page.locator('.table tbody tr:has-text("two-currencies")');
    t.equal(await sessionRow.locator('[data-testid=session-key]').textContent(), plaintext.slice(0, 9), "the row names the session's relay key by its prefix");
    t.match(await sessionRow.locator('a.row-link').getAttribute('href'), /^\/sessions\/two-currencies\?relayKeyId=\w+/, "and opens that key's session only");
    await shot('14i-sessions-two-currencies');
  });

  await t.test('a session that ends mid-edit: sign in again over the form, the edit is kept', async (t) => {
    await page.goto(`${base}/catalog/models/${ids.model}`);
    await page.fill('#f-description', 'edited across a sign-in');
    await context.clearCookies(); // the session ends (expired, or signed out elsewhere)
    await page.click('form button[type=submit]');
    await page.waitForSelector('.reauth-overlay #username');
    t.match(await page.textContent('.reauth-overlay .banner-error'), /session has ended/);
    await page.fill('.reauth-overlay #username', USERNAME);
    await page.fill('.reauth-overlay #password', PASSWORD);
    await page.click('.reauth-overlay button[type=submit]');
    await page.waitForSelector('.reauth-overlay', { state: 'detached' });
    t.equal(await page.inputValue('#f-description'), 'edited across a sign-in', 'the form kept the edit');
    await page.click('form button[type=submit]');
    await page.waitForSelector('text=Saved model');
    t.equal((await relay.api('GET', `/api/models/${ids.model}`)).body.spec.description, 'edited across a sign-in', 'and it is saved');
  });

  await t.test('narrow screens', async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, url] of [['15-narrow-usage', '/usage?since=1h'], ['16-narrow-logs', '/logs'], ['17-narrow-models', '/catalog/models']] as const) {
      await page.goto(base + url);
      await page.waitForSelector('main h1');
      await page.waitForTimeout(300);
      await shot(name);
    }
    await page.click('.nav-toggle');
    await page.waitForSelector('.nav-open .sidebar');
    await shot('18-narrow-menu', false);
    await page.keyboard.press('Tab');
    t.ok(await page.isVisible('.sidebar'), 'the menu opens on narrow screens');
  });

  t.same(pageErrors, [], 'no uncaught errors in the page');
}
