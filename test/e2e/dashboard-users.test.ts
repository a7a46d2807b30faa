// The Users and Account pages in headless Chromium against the real server: an admin adds a
// viewer on the Users page; the viewer sees no Users link, gets a 403 from /api/users, and
// changes their own password on the Account page, which then signs them in. A request's detail
// shows the viewer a line instead of its captured bodies (admins only).
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildDashboard } from '../support/dashboard-build.ts';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const CHROMIUM = process.env.RELAY_TEST_CHROMIUM ?? '/usr/bin/chromium';

if (!existsSync(CHROMIUM)) {
  t.test(`dashboard users: no Chromium at ${CHROMIUM}`, { skip: true }, () => {});
} else {
  t.test('dashboard users and own password', { timeout: 120_000 }, run);
}

async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/usage`);
  await page.waitForSelector('#username');
  await page.fill('#username', username);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('nav .nav-user-name');
}

async function run(t: Test) {
  const dashboardRoot = buildDashboard(t);
  // A catalog file applied at start: its change is in the audit trail under the file's path.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-dashboard-users-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const catalogFile = path.join(dir, 'catalog.yaml');
  writeFileSync(catalogFile, 'version: 1\nproviders:\n  - slug: gitops-openai\n    spec: { adapter: openai }\n');
  const relay = await startRelay({
    plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'payload-file' }, { use: 'admin-ui', options: { root: dashboardRoot } }],
    env: { RELAY_ADMIN_USERNAME: 'boss', RELAY_ADMIN_PASSWORD: 'boss password 1' },
    config: { catalog: { file: catalogFile } },
  });
  t.teardown(() => relay.close());
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), text: 'captured answer', inputTokens: 4, outputTokens: 2 })) }));
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'users-gpt', relayKey: { payloadLoggingEnabled: true } });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true });
  await eventually(() => relay.relay.settings.get('payload-logging').enabled);
  const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'users-gpt', messages: [{ role: 'user', content: 'a prompt only admins read' }] });
  const requestId = answer.headers.get('x-request-id')!;
  await usageRecord(relay, requestId);
  await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).body.request_body !== undefined, 5_000);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  t.teardown(() => browser.close());
  const base = relay.controlUrl;

  const admin = await (await browser.newContext()).newPage();
  admin.setDefaultTimeout(15_000);
  await signIn(admin, base, 'boss', 'boss password 1');
  await admin.click('nav a[href="/users"]');
  await admin.waitForSelector('tr[data-username="boss"]');
  await admin.fill('input[name=username]', 'vera');
  await admin.fill('input[name=password]', 'vera password 1');
  await admin.selectOption('select[name=role]', 'viewer');
  await admin.click('form button[type=submit]');
  await admin.waitForSelector('tr[data-username="vera"]');
  t.equal(await admin.inputValue('tr[data-username="vera"] select'), 'viewer', 'the new user is listed as a viewer');
  const users = await relay.api('GET', '/api/users');
  t.match(users.body.items, [{ username: 'boss', role: 'admin' }, { username: 'vera', role: 'viewer', enabled: true }]);

  const viewer = await (await browser.newContext()).newPage();
  viewer.setDefaultTimeout(15_000);
  await signIn(viewer, base, 'vera', 'vera password 1');
  t.equal(await viewer.locator('nav a[href="/users"]').count(), 0, 'a viewer sees no Users link');
  const forbidden = await viewer.evaluate(async () => (await fetch('/api/users')).status);
  t.equal(forbidden, 403, "a viewer's call to /api/users is a 403");
  await viewer.goto(`${base}/logs/${encodeURIComponent(requestId)}`);
  await viewer.waitForSelector('[data-testid=payload-withheld]');
  t.match(await viewer.textContent('[data-testid=payload-withheld]'), 'Captured bodies are visible to admins.', "a viewer's request detail says the bodies are admins'");
  t.equal(await viewer.locator('section[aria-label="Request body"]').count(), 0, 'and shows no body pane');
  t.notOk((await viewer.content()).includes('a prompt only admins read'), 'the prompt is nowhere on the page');
  await admin.goto(`${base}/logs/${encodeURIComponent(requestId)}`);
  await admin.waitForSelector('section[aria-label="Request body"]');
  t.match(await admin.textContent('section[aria-label="Request body"]'), 'a prompt only admins read', 'the admin reads it');
  await viewer.click('nav a[href="/account"]');
  await viewer.fill('input[name=current-password]', 'vera password 1');
  await viewer.fill('input[name=new-password]', 'vera password 2');
  await viewer.click('form button[type=submit]');
  await viewer.waitForSelector('p.saved');
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vera', password: 'vera password 2' }) });
  t.equal(login.status, 200, 'the new password signs in');

  // The audit trail: what the two of them did, in words, newest first; a viewer has no way in.
  t.equal(await viewer.locator('nav a[href="/audit"]').count(), 0, 'a viewer sees no Audit trail link');
  await eventually(async () => (await relay.api('GET', '/api/audit?actor=vera')).body.items.length === 3); // rows follow their answers
  await admin.click('nav a[href="/audit"]');
  await admin.waitForSelector('table.table-audit tbody tr');
  const rows = await admin.$$eval('table.table-audit tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 5).map((td) => td.firstChild?.textContent?.trim() ?? '')));
  t.same(rows.slice(0, 4), [
    ['vera', 'Signed in', '—', '200'],
    ['vera', 'Changed their own password', '—', '204'],
    ['vera', 'Signed in', '—', '200'],
    ['boss', 'Added a user', 'vera', '201'],
  ], "the latest changes, each with who, what, the entity and the status");
  await admin.screenshot({ path: 'test/.output/dashboard-audit.png', fullPage: true });
  await admin.fill('#audit-actor', 'boss');
  await admin.click('form[role=search] button[type=submit]');
  // Polled from here: waitForFunction evaluates its predicate in the page, which the dashboard's policy forbids (no eval).
  await eventually(() => admin.$$eval('table.table-audit tbody tr td:nth-child(2)', (tds) => tds.every((td) => td.textContent === 'boss')), 15_000);
  t.ok(await admin.locator('table.table-audit tbody tr').count() >= 2, "boss's own changes and sign-in, filtered");
  const gitops = (await relay.api('GET', '/api/providers/gitops-openai')).body.metadata.id as string;
  await admin.fill('#audit-actor', '');
  await admin.fill('#audit-target', gitops);
  await admin.click('form[role=search] button[type=submit]');
  await eventually(() => admin.$$eval('table.table-audit tbody tr', (trs) => trs.length === 1 && (trs[0]!.querySelector('td:nth-child(3)')?.textContent ?? '').includes('catalog file')), 15_000);
  const [fromFile] = await admin.$$eval('table.table-audit tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 5).map((td) => td.textContent?.trim() ?? '')));
  t.same(fromFile, [`${catalogFile} (catalog.file at start)`, 'Created a provider (catalog file)CATALOG create providers', 'gitops-openai', '200'], 'the catalog file at start: its path, what it did, the entity');
  t.equal(await admin.getAttribute('table.table-audit tbody tr td:nth-child(4) a', 'href'), `/catalog/providers/${gitops}`, 'linked to the entity');
  t.notOk((await admin.content()).includes('vera password'), 'no password is on the page');
}
