// The `relay` command's edges (issue 39 #9): expected errors (a bad argument, a short password,
// an unreachable database, a port in use) print one line and no stack; --version; `relay check
// FILE` checks FILE; `relay check | head` does not crash when the reader goes away.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin/relay.js');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
const STACK = /\n\s+at /;

function relay(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, DATABASE_URL: '', RELAY_CONFIG: '', ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (input !== undefined) child.stdin!.end(input);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { err += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, out, err });
  }));
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-errors-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('relay --version prints the package version', async (t) => {
  const res = await relay(['--version']);
  t.equal(res.code, 0);
  t.equal(res.out, `${version}\n`);
});

t.test('relay check FILE checks FILE, not config/relay.yaml', async (t) => {
  const bad = path.join(dir, 'bad.yaml');
  writeFileSync(bad, 'server:\n  port: high\n');
  const good = path.join(dir, 'good.yaml');
  writeFileSync(good, 'plugins:\n  - use: auth-bearer\n');
  // Independent runs side by side: each spends most of its time loading the sources.
  const [refused, ok, both] = await Promise.all([relay(['check', bad]), relay(['check', good]), relay(['check', good, '--config', bad])]);
  t.equal(refused.code, 1, 'the bad file given is refused');
  t.match(refused.err, `relay: ${bad}: /server/port:`);
  t.equal(ok.code, 0, ok.err);
  t.match(ok.out, `${good}: OK\n`);
  t.equal(both.code, 1, 'two different files are an error, not a silent choice');
  t.match(both.err, /two config files given/);
});

t.test('unknown arguments are errors, one line each', async (t) => {
  const cases = [['check', '--bogus'], ['start', 'extra'], ['check', 'a.yaml', 'b.yaml'], ['master-key', 'generate', 'now'], ['frobnicate']];
  const results = await Promise.all(cases.map((args) => relay(args)));
  cases.forEach((args, i) => {
    t.equal(results[i].code, 1, args.join(' '));
    t.match(results[i].err, /^relay: /, args.join(' '));
    t.notMatch(results[i].err, STACK, `${args.join(' ')}: no stack`);
  });
  t.match(results[1].err, 'relay start: unexpected argument "extra"');
});

t.test('relay check | (a reader that goes away) exits quietly', async (t) => {
  // `true` exits at once, before relay writes: every write meets a closed pipe (EPIPE).
  const script = `"${process.execPath}" "${bin}" check "${path.join(root, 'config/relay.yaml')}" 2>"${dir}/epipe.err" | true; echo "\${PIPESTATUS[0]}"`;
  const status = await new Promise<string>((resolve, reject) => execFile('bash', ['-c', script], { cwd: root }, (err, stdout) => (err ? reject(err) : resolve(stdout.trim()))));
  t.equal(readFileSync(path.join(dir, 'epipe.err'), 'utf8'), '', 'nothing on stderr');
  t.equal(status, '0', 'exit 0, not a crash');
});

t.test('a short password is one line, before any database is opened; an unreachable database is one line', async (t) => {
  const [short, res] = await Promise.all([
    relay(['admin-user', 'set', '--username', 'ada'], { DATABASE_URL: 'postgres://root@127.0.0.1:1/none' }, 'short\n'),
    relay(['migrate'], { DATABASE_URL: 'postgres://root:db-secret-pw@127.0.0.1:1/relay' }),
  ]);
  t.equal(short.code, 1);
  t.equal(short.err, 'relay: password: must be 8 to 1024 characters\n');
  t.equal(res.code, 1);
  t.match(res.err, /^relay: cannot connect to 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  t.equal(res.err.split('\n').length, 2, 'one line');
  t.notMatch(res.err, /db-secret-pw/);
});

t.test('a port in use is one line, and the process exits', { timeout: 120_000 }, async (t) => {
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => holder.close(() => r())));
  const taken = (holder.address() as net.AddressInfo).port;
  const res = await relay(['start'], {
    RELAY_DATA_DIR: path.join(dir, 'data'), RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_CONTROL_PORT: String(taken), RELAY_LOG_LEVEL: 'silent',
  });
  t.equal(res.code, 1);
  const lines = res.err.split('\n').filter((l) => l.startsWith('relay: '));
  t.same(lines, [`relay: cannot listen on 127.0.0.1:${taken} (control port): address already in use`]);
  t.notMatch(res.err, STACK);
});
