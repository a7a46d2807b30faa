// A viewer's session reads and never changes or reveals a secret, on every route of the control
// API's OpenAPI document (plugins' routes included): every non-GET answers 403 (bar sign-out and
// the user's own password), and no GET answer carries a secret. The admin token stays admin.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'admin-ui' }] });
t.teardown(() => relay.close());

const hostKeySecret = 'sk-upstream-viewer-must-never-see-this';
const seeded = await seedRoute(relay, { baseUrl: 'http://127.0.0.1:9/v1', adapter: 'openai', hostKeys: [hostKeySecret] });
// A budget alerting to a Slack-like webhook: the token in its path is a secret a viewer never reads.
const webhookSecret = 'T0VIEWER/B0VIEWER/webhookSecretViewerMustNotSee';
const budget = await relay.api('POST', '/api/budgets', {
  metadata: { displayName: 'viewer budget' }, spec: { window: 'daily', limitAmount: 1, alertWebhooks: [{ url: `https://hooks.slack.com/services/${webhookSecret}`, format: 'slack' }] },
});
const viewerPassword = 'viewer password 123';
const created = await relay.api('POST', '/api/users', { username: 'vera', password: viewerPassword, role: 'viewer' });

async function signIn(username: string, password: string): Promise<string> {
  const res = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${await res.text()}`);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

const viewerCookie = await signIn('vera', viewerPassword);
const asViewer = (method: string, path: string, body?: unknown) => fetch(relay.controlUrl + path, {
  method,
  headers: { cookie: viewerCookie, 'x-relay-csrf': '1', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});

// Real ids, so a GET with a path parameter reaches its handler rather than a 404.
const idFor: Array<[RegExp, string]> = [
  [/\/providers\//, seeded.providerId], [/\/hosts\//, seeded.hostId], [/\/models\//, seeded.modelId],
  [/\/policies\//, seeded.policyId], [/\/host-keys\//, seeded.hostKeyIds[0]!], [/\/relay-keys\//, seeded.relayKeyId],
  [/\/budgets\//, budget.body.metadata.id],
];
function concrete(path: string): string {
  const id = idFor.find(([re]) => re.test(path))?.[1] ?? '00000000-0000-4000-8000-000000000000';
  return path.replace(/\{[^}]+\}/g, id);
}

t.test('setup', async (t) => {
  t.equal(created.status, 201, 'the admin token adds a viewer through /api/users');
  t.equal(created.body.role, 'viewer');
  t.equal(budget.status, 201, 'a budget with an alert webhook');
  t.notOk(JSON.stringify(created.body).includes('scrypt'), 'the answer carries no password hash');
});

t.test('a viewer changes nothing and reads no secret on any control route', async (t) => {
  const openapi = await relay.api('GET', '/api/openapi.json');
  const secrets = [hostKeySecret, seeded.relayKey, relay.adminToken, viewerPassword, 'scrypt$', webhookSecret, ...(relay.masterKey ? [relay.masterKey] : [])];
  // Public sign-in, sign-out and the user's own password are the only changes a viewer makes.
  const mayChange = new Set(['POST /api/auth/login', 'POST /api/auth/logout', 'PUT /api/auth/password']);
  let changes = 0;
  let reads = 0;
  for (const [path, operations] of Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
      if (mayChange.has(`${method} ${path}`)) continue;
      const res = await asViewer(method, concrete(path), method === 'GET' || method === 'DELETE' ? undefined : {});
      const text = await res.text();
      if (method === 'GET') {
        reads++;
        for (const secret of secrets) t.notOk(text.includes(secret), `GET ${path} does not reveal ${secret.slice(0, 12)}...`);
        if (path === '/api/users') t.equal(res.status, 403, 'the user list is admin only');
      } else {
        changes++;
        t.equal(res.status, 403, `${method} ${path} is forbidden to a viewer`);
        t.match(text, /RELAY_ERR_FORBIDDEN/, `${method} ${path} says why`);
      }
    }
  }
  t.ok(changes >= 30 && reads >= 20, `walked ${changes} changing and ${reads} reading operations`);
  // The listener-root routes outside /api.
  for (const path of ['/config.json', '/metrics']) {
    const text = await (await asViewer('GET', path)).text();
    for (const secret of secrets) t.notOk(text.includes(secret), `GET ${path} does not reveal a secret`);
  }
  t.equal((await asViewer('POST', '/api/reload')).status, 403, 'an unknown-to-the-document change is refused too');
});

t.test('a viewer reads the catalog, logs and usage', async (t) => {
  for (const path of ['/api/providers', '/api/models', `/api/hosts/${seeded.hostId}`, '/api/logs', '/api/auth/whoami']) {
    t.equal((await asViewer('GET', path)).status, 200, `GET ${path}`);
  }
  t.same(await (await asViewer('GET', '/api/auth/whoami')).json(), { kind: 'user', username: 'vera', role: 'viewer' });
});

t.test('a viewer changes their own password and signs out', async (t) => {
  const changed = await asViewer('PUT', '/api/auth/password', { currentPassword: viewerPassword, newPassword: 'a new viewer password' });
  t.equal(changed.status, 204);
  t.equal((await asViewer('GET', '/api/auth/whoami')).status, 200, 'the session that changed it lives on');
  await signIn('vera', 'a new viewer password');
  t.equal((await asViewer('POST', '/api/auth/logout')).status, 204);
});

t.test('the break-glass admin token stays admin', async (t) => {
  const whoami = await relay.api('GET', '/api/auth/whoami');
  t.same(whoami.body, { kind: 'admin-token', role: 'admin' });
  t.equal((await relay.api('GET', '/api/users')).status, 200);
});
