// The `relay` command as an operator runs it: a fresh start on embedded PGlite, SIGTERM to a
// clean exit, and a broken config refused with the file and JSON pointer and no stack trace.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../core/testing.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function run(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(root, 'bin/relay.js'), ...args], {
    cwd: root, env: { ...process.env, DATABASE_URL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

t.test('starts on embedded PGlite with the default config, and SIGTERM exits 0', { timeout: 120_000 }, async (t) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-'));
  const [port, controlPort] = [await freePort(), await freePort()];
  const proc = run(['start'], { RELAY_DATA_DIR: dataDir, RELAY_PORT: String(port), RELAY_CONTROL_PORT: String(controlPort), RELAY_HOST: '127.0.0.1' });
  t.teardown(() => { proc.child.kill('SIGKILL'); });
  await eventually(async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
    } catch {
      return false;
    }
  }, 90_000, 250);
  const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json() as { status: string };
  t.equal(health.status, 'ready', '/healthz is /readyz');
  t.same(await (await fetch(`http://127.0.0.1:${port}/livez`)).json(), { status: 'ok' }, '/livez');
  const v = await (await fetch(`http://127.0.0.1:${controlPort}/api/version`)).json() as { version: string };
  t.equal(v.version, version, '/api/version returns the package version');
  proc.child.kill('SIGTERM');
  t.equal(await proc.exited, 0, 'exit code 0 after SIGTERM');
});

t.test('a config with a typo in a plugin option fails start-up with the pointer', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-bad-'));
  const file = path.join(dir, 'relay.yaml');
  writeFileSync(file, 'plugins:\n  - use: auth-bearer\n  - use: wire-vendor-a\n    options:\n      prefx: /openai\n');
  const proc = run(['start', '--config', file], { RELAY_DATA_DIR: dir });
  t.equal(await proc.exited, 1, 'non-zero exit');
  t.equal(proc.err().trim(), `relay: ${file}: /plugins/1/options/prefx: unknown option "prefx" (plugin wire-vendor-a)`);
  t.notMatch(proc.err(), /\n\s+at /, 'no stack trace for a user error');
});

t.test('check prints the plugin tree of a good config and rejects a bad one', async (t) => {
  const good = run(['check', '--config', path.join(root, 'config/relay.yaml')], {});
  t.equal(await good.exited, 0);
  t.match(good.out(), /plugins \(in load order\):\n  auth-bearer \[auth\] from builtin/);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-check-'));
  const file = path.join(dir, 'bad.yaml');
  writeFileSync(file, 'server:\n  port: high\n');
  const bad = run(['check', '--config', file], {});
  t.equal(await bad.exited, 1);
  t.match(bad.err(), `${file}: /server/port:`);
});

t.test('master-key generate prints a usable 32-byte key', async (t) => {
  const proc = run(['master-key', 'generate'], {});
  t.equal(await proc.exited, 0);
  t.equal(Buffer.from(proc.out().trim(), 'base64').length, 32);
});
