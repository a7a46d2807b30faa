// Start-up failures end the process: a port already taken or an unreachable database (with no
// local catalog snapshot to start from) exit non-zero promptly with one line naming the cause,
// no stack trace, even with DATABASE_URL set (open pool and LISTEN handles once kept it alive).
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '../../core/testing.ts';
import { freePort } from '../support/relay-process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** From the last log line the process wrote (its last step before the failure) to its exit. */
  afterLastLogMs: number;
}

/** Runs `relay start`; kills it (and reports code null) when it is still running after `boundMs`. */
function start(env: Record<string, string>, boundMs: number): Promise<Run> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-startup-'));
  const child = spawn(process.execPath, [path.join(root, 'bin/relay.js'), 'start'], {
    cwd: root, env: { ...process.env, RELAY_DATA_DIR: dataDir, RELAY_HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let lastLogAt = Date.now();
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.on('data', () => { lastLogAt = Date.now(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
  return new Promise((resolve) => child.on('exit', (code, signal) => {
    clearTimeout(timer);
    resolve({ code, signal, stderr, afterLastLogMs: Date.now() - lastLogAt });
  }));
}

/** Holds a port, as another process would. */
async function occupied(): Promise<{ port: number; close(): Promise<void> }> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as net.AddressInfo).port, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

function oneLineNoStack(t: Test, run: Run): void {
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${JSON.stringify(run.stderr)}`);
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
  t.ok(run.afterLastLogMs < 1_000, `exited ${run.afterLastLogMs} ms after its last log line`);
}

t.test('inference port in use, with DATABASE_URL set: exits 1 naming the port', { timeout: 120_000 }, async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const taken = await occupied();
  t.teardown(() => taken.close());
  const run = await start({ DATABASE_URL: database.url, RELAY_PORT: String(taken.port), RELAY_CONTROL_PORT: String(await freePort()) }, 60_000);
  t.equal(run.signal, null, 'exited by itself (not killed after the bound)');
  t.equal(run.code, 1, 'exit code 1');
  t.match(run.stderr, `relay: cannot listen on 127.0.0.1:${taken.port} (inference port): address already in use`);
  oneLineNoStack(t, run);
});

t.test('control port in use, with DATABASE_URL set: exits 1 naming the port', { timeout: 120_000 }, async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const taken = await occupied();
  t.teardown(() => taken.close());
  const run = await start({ DATABASE_URL: database.url, RELAY_PORT: String(await freePort()), RELAY_CONTROL_PORT: String(taken.port) }, 60_000);
  t.equal(run.signal, null, 'exited by itself');
  t.equal(run.code, 1);
  t.match(run.stderr, `relay: cannot listen on 127.0.0.1:${taken.port} (control port): address already in use`);
  oneLineNoStack(t, run);
});

t.test('database unreachable and no local snapshot: exits 1 naming the database, not its password', { timeout: 120_000 }, async (t) => {
  const dead = await freePort();
  const run = await start({ DATABASE_URL: `postgres://root:hunter2-secret@127.0.0.1:${dead}/relay`, RELAY_PORT: String(await freePort()), RELAY_CONTROL_PORT: String(await freePort()) }, 60_000);
  t.equal(run.signal, null, 'exited by itself');
  t.equal(run.code, 1);
  t.match(run.stderr, `relay: the database at 127.0.0.1:${dead} is unreachable`);
  t.match(run.stderr, /no local catalog snapshot/);
  t.notMatch(run.stderr, /hunter2/, 'the password is not printed');
  oneLineNoStack(t, run);
});

t.test('a database that answers but refuses Relay: exits 1 naming it (no snapshot fallback)', { timeout: 120_000 }, async (t) => {
  const run = await start({ DATABASE_URL: 'postgres://root@127.0.0.1:5432/relay_no_such_database', RELAY_PORT: String(await freePort()), RELAY_CONTROL_PORT: String(await freePort()) }, 60_000);
  t.equal(run.signal, null, 'exited by itself');
  t.equal(run.code, 1);
  t.match(run.stderr, 'relay: the database at 127.0.0.1:5432 refused Relay: database "relay_no_such_database" does not exist');
  oneLineNoStack(t, run);
});

t.test('a plugin option naming an unset environment variable: exits 1 naming it, no stack', { timeout: 120_000 }, async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  // What examples/config/scaled.yaml does without CLICKHOUSE_PASSWORD: log-clickhouse reads its
  // password from the variable its passwordEnv names, at start, before reaching ClickHouse.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-startup-config-'));
  const config = path.join(dir, 'relay.yaml');
  writeFileSync(config, [
    'server: { port: 8080, controlPort: 8081 }',
    'plugins:',
    '  - use: auth-bearer',
    '  - use: log-file',
    '  - use: log-clickhouse',
    `    options: { url: "http://127.0.0.1:${await freePort()}", passwordEnv: RELAY_TEST_CLICKHOUSE_PASSWORD_UNSET }`,
    '',
  ].join('\n'));
  const run = await start({ RELAY_CONFIG: config, DATABASE_URL: database.url, RELAY_PORT: String(await freePort()), RELAY_CONTROL_PORT: String(await freePort()) }, 60_000);
  t.equal(run.signal, null, 'exited by itself');
  t.equal(run.code, 1);
  t.match(run.stderr, 'relay: log-clickhouse: environment variable RELAY_TEST_CLICKHOUSE_PASSWORD_UNSET (passwordEnv) is not set');
  t.notMatch(run.stderr, /unexpected error/, 'an operator\'s mistake, not reported as a bug');
  oneLineNoStack(t, run);
});
