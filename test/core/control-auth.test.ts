// Control-plane authentication over HTTP: every guarded route refuses a caller without
// credentials; the admin token; sign-in, whoami, sign-out and session expiry; sessions shared
// by two instances on one database; CSRF protection of cookie-authenticated changes.
import t from 'tap';
import type { RouteOptions } from 'fastify';
import { ensureInitialAdmin, upsertAdminUser } from '../../core/control/index.ts';
import { addAdminUser, client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const routes: RouteOptions[] = [];
const relay = await startControl({
  databaseUrl: database.url,
  beforeControl: (app) => app.addHook('onRoute', (route) => { routes.push(route); }),
});
const other = await startControl({ databaseUrl: database.url, adminToken: relay.adminToken });
t.teardown(async () => {
  await relay.close();
  await other.close();
  await database.drop();
});
await addAdminUser(relay, 'ada', 'correct horse battery');
const anonymous = client(relay.url);
const admin = client(relay.url, { token: relay.adminToken });

async function signIn(base: string, username = 'ada', password = 'correct horse battery'): Promise<string> {
  const res = await client(base)('POST', '/api/auth/login', { username, password });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
  return res.headers.get('set-cookie')!.split(';')[0];
}

const SAMPLE: Record<string, string> = { id: '00000000-0000-4000-8000-000000000000', ref: 'some-slug', requestId: 'req-1' };

function concretePath(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, (_, name: string) => SAMPLE[name] ?? 'x').replace(/\*$/, 'x');
}

t.test('every non-public control route answers 401 without credentials', async (t) => {
  const methods = (r: RouteOptions) => (Array.isArray(r.method) ? r.method : [r.method]);
  const checked: string[] = [];
  for (const route of routes) {
    const isPublic = (route.config as { public?: boolean } | undefined)?.public === true;
    const guarded = route.url.startsWith('/api') || route.url === '/metrics';
    for (const method of methods(route)) {
      if (method === 'HEAD') continue;
      const res = await anonymous(method, concretePath(route.url), method === 'GET' || method === 'DELETE' ? undefined : {});
      if (isPublic) {
        t.not(res.status, 401, `${method} ${route.url} is public`);
      } else if (guarded) {
        t.equal(res.status, 401, `${method} ${route.url}`);
        t.equal(res.json?.error?.code, 'RELAY_ERR_UNAUTHENTICATED', `${method} ${route.url} says why`);
        checked.push(`${method} ${route.url}`);
      }
    }
  }
  t.ok(checked.length >= 45, `walked ${checked.length} guarded routes`);
  for (const must of ['GET /api/providers', 'PUT /api/relay-keys/by-id/:id', 'POST /api/relay-keys/by-id/:id/rotate', 'GET /metrics', 'GET /api/openapi.json', 'GET /api/logs', 'POST /api/reload']) {
    t.ok(checked.includes(must), `${must} was walked`);
  }
  t.equal((await anonymous('GET', '/api/version')).status, 200, '/api/version is public');
  t.equal((await anonymous('GET', '/config.json')).status, 401, '/config.json is not public');
});

t.test('unknown /api paths: 401 before authentication, a JSON 404 after', async (t) => {
  const anon = await anonymous('GET', '/api/no-such-thing');
  t.equal(anon.status, 401);
  const authed = await admin('GET', '/api/no-such-thing');
  t.equal(authed.status, 404);
  t.equal(authed.json.error.code, 'RELAY_ERR_NOT_FOUND');
  t.equal((await anonymous('DELETE', '/api/providers')).status, 401, 'an unrouted method too');
});

t.test('an encoded path cannot slip past the guard', async (t) => {
  for (const path of ['/%61pi/providers', '/api%2Fproviders', '/api/providers/', '/api/providers?x=1', '//api/providers']) {
    const res = await anonymous('GET', path);
    t.not(res.status, 200, `${path} -> ${res.status}`);
  }
});

t.test('the admin token', async (t) => {
  t.equal((await admin('GET', '/api/providers')).status, 200);
  const whoami = await admin('GET', '/api/auth/whoami');
  t.same(whoami.json, { kind: 'admin-token', role: 'admin' });
  const wrong = await client(relay.url, { token: `${relay.adminToken}x` })('GET', '/api/providers');
  t.equal(wrong.status, 401);
  t.notMatch(wrong.text, relay.adminToken, 'the token is not echoed');
  const basic = await anonymous('GET', '/api/providers', undefined, { authorization: `Basic ${Buffer.from(`a:${relay.adminToken}`).toString('base64')}` });
  t.equal(basic.status, 401);
  const metrics = await admin('GET', '/metrics');
  t.equal(metrics.status, 200);
  t.match(metrics.headers.get('content-type'), /text\/plain/);
  t.match(metrics.text, /relay_control_requests_total\{method="GET",route="\/api\/providers",status="200"\} \d+/);
  t.match(metrics.text, /relay_catalog_entities\{kind="providers"\} 0/);
  t.match(metrics.text, /relay_catalog_snapshot_age_seconds \d/);
  t.match(metrics.text, /relay_control_request_duration_seconds_bucket/);
});

t.test('sign in, whoami, sign out', async (t) => {
  const wrongPassword = await anonymous('POST', '/api/auth/login', { username: 'ada', password: 'wrong password' });
  const unknownUser = await anonymous('POST', '/api/auth/login', { username: 'nobody', password: 'wrong password' });
  t.equal(wrongPassword.status, 401);
  t.equal(unknownUser.status, 401);
  t.same(wrongPassword.json, unknownUser.json, 'the same answer for an unknown user and a wrong password');
  t.equal(wrongPassword.headers.get('set-cookie'), null);

  const badBody = await anonymous('POST', '/api/auth/login', { username: 'ada' });
  t.equal(badBody.status, 400);
  t.equal(badBody.json.error.field, '/password');

  const res = await anonymous('POST', '/api/auth/login', { username: 'ada', password: 'correct horse battery' });
  t.equal(res.status, 200);
  t.same(res.json, { user: { username: 'ada' } });
  const setCookie = res.headers.get('set-cookie')!;
  t.match(setCookie, /^relay_session=[A-Za-z0-9_-]{40,};/);
  t.match(setCookie, /HttpOnly/);
  t.match(setCookie, /SameSite=Strict/);
  t.match(setCookie, /Path=\//);
  t.notMatch(setCookie, /Secure/, 'not Secure unless configured');
  const cookie = setCookie.split(';')[0];
  const token = cookie.split('=')[1];
  const stored = await relay.db.query<{ token_hash: string }>('SELECT token_hash FROM admin_sessions');
  t.ok(stored.rows.every((r) => r.token_hash !== token), 'the session token is not stored');
  t.ok(stored.rows.some((r) => /^[0-9a-f]{64}$/.test(r.token_hash)), 'its sha256 is');

  const asUser = client(relay.url, { cookie, csrf: true });
  t.same((await asUser('GET', '/api/auth/whoami')).json, { kind: 'user', username: 'ada', role: 'admin' });
  t.equal((await asUser('GET', '/api/providers')).status, 200);

  const out = await asUser('POST', '/api/auth/logout');
  t.equal(out.status, 204);
  t.match(out.headers.get('set-cookie'), /relay_session=;/);
  const after = await asUser('GET', '/api/auth/whoami');
  t.equal(after.status, 401, 'the session is gone');
  t.match(after.headers.get('set-cookie'), /relay_session=;/, 'and the stale cookie is cleared');
});

t.test('sessions expire', async (t) => {
  const cookie = await signIn(relay.url);
  const asUser = client(relay.url, { cookie });
  t.equal((await asUser('GET', '/api/auth/whoami')).status, 200);
  await relay.db.query("UPDATE admin_sessions SET expires_at = now() - interval '1 second'");
  const res = await asUser('GET', '/api/auth/whoami');
  t.equal(res.status, 401);
  t.match(res.json.error.message, /expired/);
});

t.test('a session created on one instance is accepted by another', async (t) => {
  const cookie = await signIn(relay.url);
  const onOther = client(other.url, { cookie, csrf: true });
  t.same((await onOther('GET', '/api/auth/whoami')).json, { kind: 'user', username: 'ada', role: 'admin' });
  t.equal((await onOther('POST', '/api/auth/logout')).status, 204, 'signed out on the other instance');
  t.equal((await client(relay.url, { cookie })('GET', '/api/auth/whoami')).status, 401, 'ended on the first as well');
});

t.test('cookie-authenticated changes need the CSRF header and a same-host Origin', async (t) => {
  const cookie = await signIn(relay.url);
  const body = { metadata: { displayName: 'CSRF probe' }, spec: { adapter: 'openai' } };
  const noHeader = await client(relay.url, { cookie })('POST', '/api/providers', body);
  t.equal(noHeader.status, 403);
  t.equal(noHeader.json.error.code, 'RELAY_ERR_CSRF');
  const wrongValue = await client(relay.url, { cookie })('POST', '/api/providers', body, { 'x-relay-csrf': 'yes' });
  t.equal(wrongValue.status, 403);
  const foreign = await client(relay.url, { cookie, csrf: true })('POST', '/api/providers', body, { origin: 'https://evil.example' });
  t.equal(foreign.status, 403);
  t.equal(foreign.json.error.code, 'RELAY_ERR_CSRF');
  const nullOrigin = await client(relay.url, { cookie, csrf: true })('DELETE', '/api/providers/by-id/00000000-0000-4000-8000-000000000000', undefined, { origin: 'null' });
  t.equal(nullOrigin.status, 403);
  const sameOrigin = await client(relay.url, { cookie, csrf: true })('POST', '/api/providers', body, { origin: relay.url });
  t.equal(sameOrigin.status, 201);
  const reads = await client(relay.url, { cookie })('GET', '/api/providers');
  t.equal(reads.status, 200, 'reads need no header');
  const bearer = await admin('POST', '/api/providers', { ...body, metadata: { displayName: 'Bearer change' } });
  t.equal(bearer.status, 201, 'bearer requests are exempt');
  const loginFromElsewhere = await anonymous('POST', '/api/auth/login', { username: 'ada', password: 'correct horse battery' }, { origin: 'https://evil.example' });
  t.equal(loginFromElsewhere.status, 403, 'no cross-site sign-in');
});

t.test('Secure cookies when configured', async (t) => {
  const secure = await startControl({ databaseUrl: database.url, config: { secureCookies: true } });
  t.teardown(() => secure.close());
  const res = await client(secure.url)('POST', '/api/auth/login', { username: 'ada', password: 'correct horse battery' });
  t.equal(res.status, 200);
  t.match(res.headers.get('set-cookie'), /; Secure/);
});

t.test('Secure cookies when the browser came over TLS, as a trusted proxy says', async (t) => {
  const login = (url: string, headers: Record<string, string> = {}) =>
    client(url)('POST', '/api/auth/login', { username: 'ada', password: 'correct horse battery' }, headers);
  const proxied = await startControl({ databaseUrl: database.url, server: { trustProxy: true } });
  t.teardown(() => proxied.close());
  const viaTls = await login(proxied.url, { 'x-forwarded-proto': 'https' });
  t.equal(viaTls.status, 200);
  t.match(viaTls.headers.get('set-cookie'), /; Secure/, 'a trusted proxy saying https makes the cookie Secure');
  const signOut = await client(proxied.url, { cookie: viaTls.headers.get('set-cookie')!.split(';')[0], csrf: true })(
    'POST', '/api/auth/logout', undefined, { 'x-forwarded-proto': 'https' },
  );
  t.equal(signOut.status, 204);
  t.match(signOut.headers.get('set-cookie'), /; Secure/, 'and so is the cookie that clears it');
  const plain = await login(proxied.url, { 'x-forwarded-proto': 'http' });
  t.notMatch(plain.headers.get('set-cookie'), /Secure/, 'plain http through the proxy stays without Secure (the browser would drop it)');

  // Without trustProxy the header is anyone's to send: it is not believed.
  const untrusted = await login(relay.url, { 'x-forwarded-proto': 'https' });
  t.equal(untrusted.status, 200);
  t.notMatch(untrusted.headers.get('set-cookie'), /Secure/, 'an untrusted X-Forwarded-Proto changes nothing');
});

t.test('the first admin user and password resets', async (t) => {
  const db2 = await createTestDatabase();
  const fresh = await startControl({ databaseUrl: db2.url });
  t.teardown(async () => {
    await fresh.close();
    await db2.drop();
  });
  const log = { info: () => undefined, warn: () => undefined };
  t.equal(await ensureInitialAdmin(fresh.db, {}, log), 'not-configured');
  const env = { RELAY_ADMIN_USERNAME: 'root', RELAY_ADMIN_PASSWORD: 'first-start-password' };
  t.equal(await ensureInitialAdmin(fresh.db, env, log), 'created');
  t.equal(await ensureInitialAdmin(fresh.db, { ...env, RELAY_ADMIN_PASSWORD: 'another-password' }, log), 'users-exist', 'never changes an existing user');
  const rows = await fresh.db.query<{ password_hash: string }>('SELECT password_hash FROM admin_users');
  t.equal(rows.rows.length, 1);
  t.match(rows.rows[0].password_hash, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/, 'scrypt with its parameters and salt');
  t.notMatch(rows.rows[0].password_hash, /first-start-password/);
  const cookie = await signIn(fresh.url, 'root', 'first-start-password');
  t.equal((await client(fresh.url, { cookie })('GET', '/api/auth/whoami')).status, 200);
  t.same(await upsertAdminUser(fresh.db, 'root', 'a-new-password'), { created: false });
  t.equal((await client(fresh.url, { cookie })('GET', '/api/auth/whoami')).status, 401, 'a reset ends the sessions');
  t.equal((await client(fresh.url)('POST', '/api/auth/login', { username: 'root', password: 'first-start-password' })).status, 401);
  await signIn(fresh.url, 'root', 'a-new-password');
  t.same(await upsertAdminUser(fresh.db, 'grace', 'another-password'), { created: true });
  await t.rejects(upsertAdminUser(fresh.db, 'grace', 'short'), { code: 'RELAY_ERR_BAD_REQUEST' });
});
