// `relay admin-user set` (issue 39 #3): the password comes on stdin and never argv; against a
// Relay running on the embedded database the CLI refuses with a clear message, or, given
// RELAY_ADMIN_TOKEN, makes the change through that instance so it takes effect at once. That
// Relay is the one holding the data directory, whatever answers on the config's control port.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startRelay } from '../../core/testing.ts';
import { openDatabase } from '../../core/db/open.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin/relay.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-admin-user-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function relayCli(args: string[], input: string | null, env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: root, env: { ...process.env, DATABASE_URL: '', RELAY_CONFIG: '', RELAY_ADMIN_TOKEN: '', RELAY_DATA_DIR: path.join(dir, 'data'), ...env }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  if (input !== null) child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, out, err });
  }));
}

async function signIn(controlUrl: string, username: string, password: string): Promise<number> {
  const res = await fetch(`${controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  await res.body?.cancel();
  return res.status;
}

t.test('a password on argv is refused; one on stdin is checked before any database opens', async (t) => {
  const [argv, short, badRole] = await Promise.all([
    relayCli(['admin-user', 'set', '--username', 'ada', '--password', 'long enough secret'], ''),
    relayCli(['admin-user', 'set', '--username', 'ada'], 'short\n', { DATABASE_URL: 'postgres://root@127.0.0.1:1/none' }),
    relayCli(['admin-user', 'set', '--username', 'ada', '--role', 'owner'], 'long enough secret\n'),
  ]);
  t.equal(argv.code, 1);
  t.match(argv.err, /^relay: relay admin-user set: --password is refused .*standard input/);
  t.notMatch(argv.err, /long enough secret/, 'the password is not echoed');
  t.equal(short.code, 1);
  t.equal(short.err, 'relay: password: must be 8 to 1024 characters\n');
  t.equal(badRole.code, 1);
  t.match(badRole.err, '--role must be admin or viewer');
});

t.test('against a Relay running on the embedded database: refused without the token, through its API with it', async (t) => {
  const dataDir = path.join(dir, 'data');
  let relay = await startRelay({ database: 'pglite', dataDir });
  t.teardown(() => relay.close());
  const controlPort = new URL(relay.controlUrl).port;
  // Not the running Relay's control port: the data directory names it.
  const env = { RELAY_CONTROL_PORT: '1' };
  const refused = await relayCli(['admin-user', 'set', '--username', 'ada'], 'ada password 1\n', env);
  t.equal(refused.code, 1);
  t.match(refused.err, /a Relay is running on the embedded database .* set RELAY_ADMIN_TOKEN/);
  t.equal(refused.err.split('\n').length, 2, 'one line');
  t.equal(await signIn(relay.controlUrl, 'ada', 'ada password 1'), 401, 'nothing was written');

  const saved = await relayCli(['admin-user', 'set', '--username', 'ada', '--role', 'viewer'], 'ada password 1\n', { ...env, RELAY_ADMIN_TOKEN: relay.adminToken });
  t.equal(saved.code, 0, saved.err);
  t.match(saved.out, `user ada saved through the running Relay at http://127.0.0.1:${controlPort}`);
  t.equal(await signIn(relay.controlUrl, 'ada', 'ada password 1'), 200, 'the running instance sees the new user at once');
  const users = await relay.api('GET', '/api/users');
  t.match(users.body.items, [{ username: 'ada', role: 'viewer' }]);

  const reset = await relayCli(['admin-user', 'set', '--username', 'ada'], 'ada password 2', { ...env, RELAY_ADMIN_TOKEN: relay.adminToken });
  t.equal(reset.code, 0, reset.err);
  t.equal(await signIn(relay.controlUrl, 'ada', 'ada password 2'), 200, 'a reset takes effect at once');

  await relay.close();
  relay = await startRelay({ database: 'pglite', dataDir });
  t.equal(await signIn(relay.controlUrl, 'ada', 'ada password 2'), 200, 'the change survives a restart');
});

t.test('pointed at another data directory, it writes that one, not through the Relay answering on its control port', async (t) => {
  const relay = await startRelay({ database: 'pglite' });
  t.teardown(() => relay.close());
  const dataDir = path.join(dir, 'other');
  const res = await relayCli(['admin-user', 'set', '--username', 'dave'], 'dave password 1\n',
    { RELAY_DATA_DIR: dataDir, RELAY_CONTROL_PORT: new URL(relay.controlUrl).port, RELAY_ADMIN_TOKEN: relay.adminToken });
  t.equal(res.code, 0, res.err);
  t.equal(res.out, 'user dave saved\n');
  t.equal(await signIn(relay.controlUrl, 'dave', 'dave password 1'), 401, 'the Relay on another directory was not changed');
  const own = await startRelay({ database: 'pglite', dataDir });
  t.teardown(() => own.close());
  t.equal(await signIn(own.controlUrl, 'dave', 'dave password 1'), 200, 'the directory it was pointed at has the user');
});

t.test('while another relay CLI command holds the embedded database (no control API named): refused', async (t) => {
  const dataDir = path.join(dir, 'held');
  const held = await openDatabase({ dataDir });
  t.teardown(() => held.close());
  const res = await relayCli(['admin-user', 'set', '--username', 'gus'], 'gus password 1\n', { RELAY_DATA_DIR: dataDir });
  t.equal(res.code, 1);
  t.equal(res.err, `relay: relay admin-user set: the embedded database ${path.join(dataDir, 'pglite')} is in use by another relay CLI command, `
    + 'or by a Relay starting or stopping (it names no control API); run this again once it is done\n');
});

t.test('with no Relay running, the embedded database is written directly', async (t) => {
  const res = await relayCli(['admin-user', 'set', '--username', 'bob'], 'bob password 1\n', { RELAY_CONTROL_PORT: '1' });
  t.equal(res.code, 0, res.err);
  t.equal(res.out, 'user bob saved\n');
  // The audit trail has the change, by the CLI and the account that ran it.
  const relay = await startRelay({ database: 'pglite', dataDir: path.join(dir, 'data') });
  t.teardown(() => relay.close());
  const audit = await relay.api('GET', '/api/audit?target=bob');
  t.match(audit.body.items, [{ actor: { kind: 'cli', name: os.userInfo().username }, method: 'CLI', route: 'relay admin-user set', target: 'bob', status: 200 }]);
  t.notOk(JSON.stringify(audit.body).includes('bob password'), 'not the password');
});
