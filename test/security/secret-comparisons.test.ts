// Where a secret is compared, it is compared in constant time, and no credential stands in for
// another. The admin token goes through safeEqual (sha256 of both, then timingSafeEqual); relay
// keys and session tokens are looked up by their sha256, so no secret is compared at all; scrypt
// password hashes are compared with timingSafeEqual. A source scan keeps `===` off secrets; the
// HTTP checks fill what test/core/control-auth.test.ts leaves out (wrong bearer beside a valid
// cookie, credentials of one kind presented as another, a forged cookie, the cookie's lifetime).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { safeEqual } from '../../core/crypto/relay-keys.ts';
import { verifyPassword, hashPassword } from '../../core/control/passwords.ts';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

t.test('no secret is compared with == or === in core or plugins', async (t) => {
  // A name that holds a secret, compared with something other than null, undefined or a literal.
  const compared = /\b\w*(token|password|secret|plaintext|apikey|credential)\w*\s*[!=]==?\s*(?!null\b|undefined\b|''|""|\d)[\w.[]/i;
  const reversed = /[!=]==?\s*[\w.]*\b\w*(token|password|secret|plaintext|apikey|credential)\w*\b(?!\s*\.length)/i;
  const files = [...sourceFiles(path.join(ROOT, 'core')), ...sourceFiles(path.join(ROOT, 'plugins'))];
  const hits: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return;
      if (compared.test(line) || (reversed.test(line) && !/[!=]==?\s*(null|undefined|''|\d)/.test(line))) hits.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  t.ok(files.length > 100, `${files.length} files scanned`);
  t.same(hits, [], 'no equality comparison on a secret');
  const guard = readFileSync(path.join(ROOT, 'core/control/auth-guard.ts'), 'utf8');
  t.match(guard, /safeEqual\(match\[1\], options\.adminToken\)/, 'the admin token goes through safeEqual');
  const relayKeyAuth = readFileSync(path.join(ROOT, 'core/pipeline/relay-key-auth.ts'), 'utf8');
  t.match(relayKeyAuth, /relayKeyByHash\(hashSecret\(plaintext\)\)/, 'relay keys are looked up by sha256');
  const sessions = readFileSync(path.join(ROOT, 'core/control/sessions.ts'), 'utf8');
  t.match(sessions, /token_hash = \$1[^`]*`, \[hashSecret\(token\)\]/, 'sessions are looked up by sha256');
});

t.test('safeEqual and verifyPassword', async (t) => {
  t.ok(safeEqual('adm_abc', 'adm_abc'));
  t.notOk(safeEqual('adm_abc', 'adm_abd'));
  t.notOk(safeEqual('adm_abc', 'adm_abcd'), 'different lengths: false, no throw');
  t.notOk(safeEqual('', 'x'));
  t.ok(safeEqual('é\u0000', 'é\u0000'), 'any string');
  const stored = await hashPassword('correct horse');
  t.ok(await verifyPassword('correct horse', stored));
  t.notOk(await verifyPassword('correct horsf', stored));
  const cut = [...stored.split('$').slice(0, 5), stored.split('$')[5].slice(0, 8)].join('$');
  for (const malformed of [cut, '', 'scrypt$', 'scrypt$0$8$1$AA$AA', 'bcrypt$x$y$z$a$b', 'scrypt$16384$8$1$AA$']) {
    t.notOk(await verifyPassword('correct horse', malformed), `malformed hash ${JSON.stringify(malformed.slice(0, 24))}: false`);
  }
});

t.test('no credential stands in for another', async (t) => {
  const relay = await startRelay({ env: { RELAY_ADMIN_USERNAME: 'ada', RELAY_ADMIN_PASSWORD: 'correct horse battery' } });
  const up = await startFakeUpstream();
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'cmp-model' });
  await settled(relay, (snap) => snap.relayKeys.has(seeded.relayKeyId));
  const control = (p: string, headers: Record<string, string>, method = 'GET') => fetch(relay.controlUrl + p, { method, headers });
  const infer = (headers: Record<string, string>) => fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'cmp-model', messages: [{ role: 'user', content: 'hi' }] }),
  });

  const login = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ada', password: 'correct horse battery' }) });
  t.equal(login.status, 200);
  const setCookie = login.headers.get('set-cookie') ?? '';
  const token = /relay_session=([^;]+)/.exec(setCookie)?.[1] ?? '';
  const expires = Date.parse(/Expires=([^;]+)/i.exec(setCookie)?.[1] ?? '');
  const ttlMs = relay.relay.config.admin.sessionTtlMinutes * 60_000;
  t.ok(Math.abs(expires - (Date.now() + ttlMs)) < 60_000, 'the cookie expires with the session (admin.sessionTtlMinutes)');
  const cookie = { cookie: `relay_session=${token}` };
  t.equal((await control('/api/auth/whoami', cookie)).status, 200, 'the cookie works');

  t.equal((await control('/api/auth/whoami', { ...cookie, authorization: 'Bearer not-the-admin-token' })).status, 401, 'a wrong bearer token is refused even beside a valid cookie');
  t.equal((await control('/api/auth/whoami', { authorization: `Bearer ${token}` })).status, 401, 'the session token is not an admin token');
  t.equal((await control('/api/auth/whoami', { authorization: `Bearer ${seeded.relayKey}` })).status, 401, 'a relay key is not an admin token');
  t.equal((await control('/api/auth/whoami', { authorization: `bearer   ${relay.adminToken}` })).status, 200, 'the scheme is case-insensitive');
  t.equal((await control('/api/auth/whoami', { authorization: `Bearer ${relay.adminToken.slice(0, -1)}` })).status, 401, 'a prefix of the admin token is refused');
  t.equal((await control('/api/auth/whoami', { cookie: `relay_session=${token.slice(0, -2)}xx` })).status, 401, 'a forged cookie is refused');
  t.equal((await control('/api/auth/whoami', { cookie: `relay_session=${relay.adminToken}` })).status, 401, 'the admin token is not a session');

  t.equal((await infer({ authorization: `Bearer ${seeded.relayKey}` })).status, 200, 'the relay key works');
  t.equal((await infer({ authorization: `Bearer ${relay.adminToken}` })).status, 401, 'the admin token is not a relay key');
  t.equal((await infer({ authorization: `Bearer ${token}` })).status, 401, 'a session token is not a relay key');
  t.equal((await infer({ ...cookie })).status, 401, 'a session cookie does not authenticate inference');
  t.equal((await infer({ authorization: `Bearer ${seeded.relayKey}x` })).status, 401, 'a relay key with a character more is refused');
});
