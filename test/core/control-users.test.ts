// /api/users over HTTP: list, create with a role, change role / enabled / password, delete;
// a disable or a new password ends the user's sessions; the last enabled admin cannot be
// removed or demoted; bad input is a 4xx naming the field; no answer carries a password hash.
import t from 'tap';
import { addAdminUser, client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});
const admin = client(relay.url, { token: relay.adminToken });

async function signIn(username: string, password: string): Promise<{ status: number; cookie: string }> {
  const res = await client(relay.url)('POST', '/api/auth/login', { username, password });
  return { status: res.status, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? '' };
}

t.test('create, list, change and delete users', async (t) => {
  await addAdminUser(relay, 'root-admin', 'root admin password');
  const created = await admin('POST', '/api/users', { username: 'vic', password: 'vic password 1', role: 'viewer' });
  t.equal(created.status, 201);
  t.match(created.json, { username: 'vic', role: 'viewer', enabled: true });
  t.notOk(created.text.includes('scrypt') || created.text.includes('vic password 1'), 'no hash or password in the answer');

  const list = await admin('GET', '/api/users');
  t.same(list.json.items.map((u: { username: string; role: string }) => `${u.username}:${u.role}`), ['root-admin:admin', 'vic:viewer']);
  t.notOk(list.text.includes('scrypt'), 'the list carries no password hash');

  t.equal((await admin('POST', '/api/users', { username: 'vic', password: 'another password', role: 'viewer' })).json.error.code, 'RELAY_ERR_CONFLICT', 'a taken name is a 409');
  const short = await admin('POST', '/api/users', { username: 'sam', password: 'short', role: 'admin' });
  t.equal(short.status, 400);
  t.equal(short.json.error.field, 'password', 'a short password names the field');
  t.equal((await admin('POST', '/api/users', { username: 'sam', password: 'long enough password', role: 'owner' })).status, 400, 'an unknown role is a 400');
  t.equal((await admin('PATCH', '/api/users/vic', {})).status, 400, 'an empty change is a 400');
  t.equal((await admin('PATCH', '/api/users/nobody', { role: 'admin' })).status, 404);

  const viewer = await signIn('vic', 'vic password 1');
  t.equal(viewer.status, 200);
  const asVic = client(relay.url, { cookie: viewer.cookie, csrf: true });
  t.equal((await asVic('POST', '/api/providers', { metadata: { displayName: 'x' }, spec: { adapter: 'openai' } })).status, 403, 'a viewer cannot create');
  t.equal((await asVic('GET', '/api/users')).status, 403, 'a viewer cannot list users');

  const promoted = await admin('PATCH', '/api/users/vic', { role: 'admin' });
  t.equal(promoted.json.role, 'admin');
  t.equal((await asVic('GET', '/api/users')).status, 200, 'a role change applies to the live session');

  t.equal((await admin('PATCH', '/api/users/vic', { enabled: false })).json.enabled, false);
  t.equal((await asVic('GET', '/api/auth/whoami')).status, 401, 'disabling ends the sessions');
  t.equal((await signIn('vic', 'vic password 1')).status, 401, 'a disabled user cannot sign in');

  await admin('PATCH', '/api/users/vic', { enabled: true, password: 'vic password 2' });
  t.equal((await signIn('vic', 'vic password 1')).status, 401, 'the old password is gone');
  const again = await signIn('vic', 'vic password 2');
  t.equal(again.status, 200, 'the new password works');
  await admin('PATCH', '/api/users/vic', { password: 'vic password 3' });
  t.equal((await client(relay.url, { cookie: again.cookie })('GET', '/api/auth/whoami')).status, 401, 'a password reset ends the sessions');

  t.equal((await admin('DELETE', '/api/users/vic')).status, 204);
  t.equal((await signIn('vic', 'vic password 3')).status, 401, 'a deleted user cannot sign in');
  t.equal((await admin('DELETE', '/api/users/vic')).status, 404);
});

t.test('the last enabled admin stays', async (t) => {
  for (const [method, body] of [['PATCH', { role: 'viewer' }], ['PATCH', { enabled: false }], ['DELETE', undefined]] as const) {
    const res = await admin(method, '/api/users/root-admin', body);
    t.equal(res.status, 409, `${method} ${JSON.stringify(body ?? {})} on the last admin`);
    t.match(res.json.error.message, /no enabled admin/);
  }
  t.equal((await signIn('root-admin', 'root admin password')).status, 200, 'it still signs in');
});

t.test('the last enabled admin stays when admins are demoted, disabled or deleted at once', async (t) => {
  // Each change checked its own row only, so two at once each saw the other admin still there
  // and both went through: no enabled admin was left (4 of 5 rounds before the fix).
  const changes = [{ role: 'viewer' }, { enabled: false }, undefined] as const;
  for (let round = 0; round < 6; round++) {
    for (const name of ['race-a', 'race-b', 'race-c']) {
      const made = await admin('POST', '/api/users', { username: name, password: 'race password 1', role: 'admin' });
      t.ok(made.status === 201 || (await admin('PATCH', `/api/users/${name}`, { role: 'admin', enabled: true })).status === 200, `${name} is an admin`);
    }
    await admin('PATCH', '/api/users/root-admin', { role: 'viewer' });
    const change = changes[round % changes.length];
    const statuses = await Promise.all(['race-a', 'race-b', 'race-c'].map((name) => admin(change === undefined ? 'DELETE' : 'PATCH', `/api/users/${name}`, change).then((r) => r.status)));
    const admins = await relay.db.query<{ n: string }>("SELECT count(*) AS n FROM admin_users WHERE role = 'admin' AND enabled");
    t.equal(Number(admins.rows[0]!.n), 1, `round ${round + 1} (${JSON.stringify(change ?? 'delete')}): one enabled admin is left (${statuses.join(', ')})`);
    t.equal(statuses.filter((s) => s === 409).length, 1, 'the change that would have removed it is a 409');
    await admin('PATCH', '/api/users/root-admin', { role: 'admin' });
  }
});

t.test('a user changes their own password', async (t) => {
  const session = await signIn('root-admin', 'root admin password');
  const self = client(relay.url, { cookie: session.cookie, csrf: true });
  const wrong = await self('PUT', '/api/auth/password', { currentPassword: 'not it at all', newPassword: 'brand new password' });
  t.equal(wrong.status, 403);
  t.equal(wrong.json.error.field, 'currentPassword');
  t.equal((await self('PUT', '/api/auth/password', { currentPassword: 'root admin password', newPassword: 'short' })).status, 400);
  t.equal((await self('PUT', '/api/auth/password', { currentPassword: 'root admin password', newPassword: 'brand new password' })).status, 204);
  t.equal((await signIn('root-admin', 'brand new password')).status, 200);
  t.equal((await admin('PUT', '/api/auth/password', { currentPassword: 'x', newPassword: 'brand new password' })).status, 400, 'the admin token has no password of its own');
});
