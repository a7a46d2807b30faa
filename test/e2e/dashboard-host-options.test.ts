// The dashboard's host form in headless Chromium: the fields of the provider's adapter's host
// options (Azure OpenAI's, from GET /api/vendor-adapters), the server's 400 under the option it
// names, options saved into spec.options; the OpenAI-compatible presets filling a new
// provider and host; and a host's header values, whole to an admin and masked to a viewer.
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { buildDashboard } from '../support/dashboard-build.ts';
import { eventually, startRelay } from '../../core/testing.ts';

const CHROMIUM = process.env.RELAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
const USERNAME = 'admin';
const PASSWORD = 'e2e-host-options-password';

if (!existsSync(CHROMIUM)) {
  t.test(`dashboard host options: no Chromium at ${CHROMIUM}; apt-get install -y chromium (or set RELAY_TEST_CHROMIUM)`, { skip: true }, () => {});
} else {
  t.test('dashboard host options and presets', { timeout: 170_000 }, run);
}

async function run(t: Test) {
  const dashboardRoot = buildDashboard(t);
  const relay = await startRelay({
    plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'vendor-azure-openai' }, { use: 'log-file' }, { use: 'admin-ui', options: { root: dashboardRoot } }],
    env: { RELAY_ADMIN_USERNAME: USERNAME, RELAY_ADMIN_PASSWORD: PASSWORD },
    database: 'pglite',
  });
  t.teardown(() => relay.close());
  const azureProvider = await relay.api('POST', '/api/providers', { metadata: { displayName: 'Azure' }, spec: { adapter: 'azure-openai' } });
  const openaiProvider = await relay.api('POST', '/api/providers', { metadata: { displayName: 'Plain OpenAI' }, spec: { adapter: 'openai' } });
  t.equal(azureProvider.status, 201);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.setDefaultTimeout(15_000);

  await page.goto(`${relay.controlUrl}/catalog/hosts/new`);
  await page.waitForSelector('#username');
  await page.fill('#username', USERNAME);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('#f-providerId');

  await t.test("the Azure provider's options appear, and the server's 400 sits under the option", async (t) => {
    await page.fill('#f-displayName', 'Azure West Europe');
    await page.selectOption('#f-providerId', openaiProvider.body.metadata.id);
    t.notOk(await page.isVisible('#f-options-apiVersion'), 'an adapter without host options shows none');
    await page.selectOption('#f-providerId', azureProvider.body.metadata.id);
    await page.waitForSelector('#f-options-apiVersion');
    t.equal(await page.getAttribute('#f-options-apiVersion', 'placeholder'), '2024-10-21', 'the default as placeholder');
    t.ok(await page.isVisible('#f-options-entra-tenantId'), 'the Entra ID group');
    t.same(await page.$$eval('#f-options-api option', (os) => os.map((o) => (o as unknown as { value: string }).value)), ['', 'deployments', 'v1']);
    await page.fill('#f-baseUrl', 'https://contoso.openai.azure.com');
    await page.fill('#f-options-apiVersion', 'yesterday');
    await page.click('form button[type=submit]');
    const error = await page.waitForSelector('[data-field="f-options-apiVersion"] .field-error');
    t.match(await error.textContent(), /pattern|match/i, 'the message is under the option');
    await page.fill('#f-options-apiVersion', '2025-03-01-preview');
    await page.selectOption('#f-options-api', 'v1');
    await page.fill('#f-options-entra-tenantId', 'contoso.onmicrosoft.com');
    await page.fill('#f-options-entra-clientId', '11111111-2222-3333-4444-555555555555');
    await page.click('form button[type=submit]');
    await page.waitForURL(/\/catalog\/hosts\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    const host = await relay.api('GET', `/api/hosts/${id}`);
    t.same(host.body.spec.options, {
      api: 'v1', apiVersion: '2025-03-01-preview', entra: { tenantId: 'contoso.onmicrosoft.com', clientId: '11111111-2222-3333-4444-555555555555' },
    }, 'saved in spec.options');
  });

  await t.test('presets fill a new provider and a new host', async (t) => {
    await page.goto(`${relay.controlUrl}/catalog/providers/new`);
    await page.waitForSelector('#f-preset');
    await page.selectOption('#f-preset', 'groq');
    t.equal(await page.inputValue('#f-adapter'), 'openai');
    await page.fill('#f-displayName', 'Groq');
    await page.click('form button[type=submit]');
    await page.waitForURL(/\/catalog\/providers\/[0-9a-f-]{36}$/);
    const provider = await relay.api('GET', `/api/providers/${page.url().split('/').pop()!}`);
    t.same(provider.body.spec, { adapter: 'openai', shapes: ['openai.chat'] });

    await page.goto(`${relay.controlUrl}/catalog/hosts/new`);
    await page.waitForSelector('#f-preset');
    await page.selectOption('#f-preset', 'openrouter');
    t.equal(await page.inputValue('#f-baseUrl'), 'https://openrouter.ai/api/v1');
  });

  await t.test("a host's header values: whole in an admin's form and saved from it; a viewer's form shows the mask", async (t) => {
    const secret = 'apim-dashboard-subscription-0123456789';
    const created = await relay.api('POST', '/api/hosts', {
      metadata: { displayName: 'APIM' }, spec: { providerId: openaiProvider.body.metadata.id, baseUrl: 'https://apim.example.com/openai', headers: { 'ocp-apim-subscription-key': secret } },
    });
    t.equal(created.status, 201);
    const id = created.body.metadata.id as string;
    const value = '[aria-label="Header 1 value"]';
    await page.goto(`${relay.controlUrl}/catalog/hosts/${id}`);
    await page.waitForSelector(value);
    t.equal(await page.inputValue(value), secret, 'the admin edits the whole value');
    await page.fill(value, `${secret}-rotated`);
    await page.click('form button[type=submit]');
    await eventually(async () => (await relay.api('GET', `/api/hosts/${id}`)).body.spec.headers['ocp-apim-subscription-key'] === `${secret}-rotated`);

    await relay.api('POST', '/api/users', { username: 'vera', password: 'viewer password 1', role: 'viewer' });
    const viewer = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    viewer.setDefaultTimeout(15_000);
    await viewer.goto(`${relay.controlUrl}/catalog/hosts/${id}`);
    await viewer.waitForSelector('#username');
    await viewer.fill('#username', 'vera');
    await viewer.fill('#password', 'viewer password 1');
    await viewer.click('button[type=submit]');
    await viewer.waitForSelector(value);
    t.equal(await viewer.inputValue('[aria-label="Header 1 name"]'), 'ocp-apim-subscription-key', 'the viewer sees the name');
    t.equal(await viewer.inputValue(value), '********', 'and the mask, not the value');
    t.notOk((await viewer.content()).includes(secret), 'the value is nowhere in the page');
  });

  t.same(pageErrors, [], 'no page errors');
}
