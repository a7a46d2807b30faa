// The dashboard against a page of the same site, in headless Chromium. A page on another port of
// the dashboard's host is same-site, so the browser sends the SameSite=Strict session cookie with
// its frames: before the control listener said "frame-ancestors 'none'" / X-Frame-Options, such a
// page framed the signed-in dashboard (invisibly, under a decoy button) one click away from
// rotating or deleting a key. Now the frame stays empty, every control answer carries the
// headers, and the dashboard's own page runs under a content-security-policy that lets it work
// (no violation on any page) and nothing else. Strings an inference caller chose (a model name, a
// session id, a user agent, a prompt) in markup show as text on the pages an admin reads.
import t, { type Test } from 'tap';
import http from 'node:http';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildDashboard } from '../support/dashboard-build.ts';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const CHROMIUM = process.env.RELAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** Markup that would mark the page if it were ever parsed as HTML. */
const MARKUP = (where: string) => `<img src=x class=injected-${where} onerror="document.title='pwned-${where}'">`;

if (!existsSync(CHROMIUM)) {
  t.test(`dashboard framing: no Chromium at ${CHROMIUM}`, { skip: true }, () => {});
} else {
  t.test('dashboard framing, security headers and caller strings', { timeout: 150_000 }, run);
}

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/usage`);
  await page.waitForSelector('#username');
  await page.fill('#username', 'boss');
  await page.fill('#password', 'boss password 1');
  await page.click('button[type=submit]');
  await page.waitForSelector('nav .nav-user-name');
}

async function run(t: Test) {
  const dashboardRoot = buildDashboard(t);
  const relay = await startRelay({
    plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'payload-file' }, { use: 'admin-ui', options: { root: dashboardRoot } }],
    env: { RELAY_ADMIN_USERNAME: 'boss', RELAY_ADMIN_PASSWORD: 'boss password 1' },
  });
  t.teardown(() => relay.close());
  const base = relay.controlUrl;

  t.test('every control answer forbids framing and sniffing', async (t) => {
    for (const [path, auth] of [['/api/users', false], ['/api/users', true], ['/metrics', true], ['/api/nothing-here', true], ['/usage', false]] as const) {
      const res = await fetch(`${base}${path}`, { headers: auth ? { authorization: `Bearer ${relay.adminToken}` } : {} });
      await res.arrayBuffer();
      const what = `${path} (${res.status})`;
      t.equal(res.headers.get('x-frame-options'), 'DENY', `${what}: x-frame-options`);
      t.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, `${what}: frame-ancestors 'none'`);
      t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
    }
    const api = await fetch(`${base}/api/users`, { headers: { authorization: `Bearer ${relay.adminToken}` } });
    t.match(api.headers.get('content-security-policy'), /^default-src 'none'/, 'an API answer opened as a page runs nothing');
    const page = await fetch(`${base}/logs/some-id`);
    t.match(page.headers.get('content-security-policy'), /script-src 'self'/, "the dashboard's page runs its own files only");
  });

  // A request whose caller-chosen strings are markup, captured with its bodies.
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  up.script(() => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: 'framing-gpt', text: MARKUP('answer'), inputTokens: 4, outputTokens: 2 })) }));
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'framing-gpt', relayKey: { payloadLoggingEnabled: true } });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true });
  await eventually(() => relay.relay.settings.get('payload-logging').enabled);
  const callerHeaders = { 'user-agent': `codex_exec ${MARKUP('agent')}`, originator: 'codex_exec', 'thread-id': MARKUP('session') };
  const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'framing-gpt', messages: [{ role: 'user', content: MARKUP('prompt') }] }, callerHeaders);
  t.equal(answer.status, 200);
  const requestId = answer.headers.get('x-request-id')!;
  const unknown = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: MARKUP('model'), messages: [{ role: 'user', content: 'hi' }] }, callerHeaders);
  t.equal(unknown.status, 404, 'a model name in markup is refused, and logged');
  await usageRecord(relay, requestId);
  await usageRecord(relay, unknown.headers.get('x-request-id')!);
  await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).body.request_body !== undefined, 5_000);

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15_000);
  const violations: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (msg) => { if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text()); });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await signIn(page, base);

  t.test('the dashboard works under its policy, and shows caller strings as text', async (t) => {
    const pages: Array<[string, string]> = [
      ['/usage', '.total-value'],
      ['/logs', 'table tbody tr'],
      [`/logs/${encodeURIComponent(requestId)}`, 'section[aria-label="Request body"]'],
      ['/sessions', 'table tbody tr'],
      ['/catalog/hosts/new', 'form'],
      ['/catalog/relay-keys', 'table tbody tr'],
      ['/settings', 'main h1'],
      ['/users', 'tr[data-username="boss"]'],
      ['/audit', 'table.table-audit tbody tr'],
    ];
    for (const [path, ready] of pages) {
      await page.goto(`${base}${path}`);
      await page.waitForSelector(ready);
      t.equal(await page.locator('[class^=injected-]').count(), 0, `${path}: no caller markup became an element`);
      t.notMatch(await page.title(), /pwned/, `${path}: no caller markup ran`);
    }
    await page.goto(`${base}/logs/${encodeURIComponent(requestId)}`);
    await page.waitForSelector('section[aria-label="Request body"]');
    t.match(await page.textContent('section[aria-label="Request body"]'), MARKUP('prompt').replace(/"/g, '\\"'), 'the prompt is shown as the text it is');
    await page.goto(`${base}/sessions`);
    await page.waitForSelector('table tbody tr');
    t.match(await page.textContent('table tbody'), MARKUP('session').slice(0, 18), 'the session id is shown as text');
    t.same(violations, [], 'no content-security-policy violation on any page');
    t.same(pageErrors, [], 'no page error');
  });

  t.test('a page of the same site cannot frame the signed-in dashboard', async (t) => {
    // Another port of the same host: same-site, so the frame's request carries the session cookie.
    const decoy = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<button>Claim your prize</button><iframe src="${base}/catalog/relay-keys" width="1000" height="700" style="opacity:0.01"></iframe>`);
    });
    await new Promise<void>((resolve) => decoy.listen(0, '127.0.0.1', resolve));
    t.teardown(() => decoy.close());
    const framed = await page.context().newPage();
    await framed.goto(`http://127.0.0.1:${(decoy.address() as AddressInfo).port}/`);
    // The frame's document either never loads (refused) or is Chromium's error page: wait for either.
    await framed.waitForTimeout(2_000);
    const frames = framed.frames().filter((f) => f !== framed.mainFrame());
    t.equal(frames.length, 1, 'the decoy has its frame');
    const signedIn = await frames[0]!.locator('nav .nav-user-name').count().catch(() => 0);
    t.equal(signedIn, 0, 'the frame shows no signed-in dashboard');
  });
}
