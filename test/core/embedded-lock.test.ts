// The embedded database's directory has one process at a time: a second `relay start` on it
// exits with one line while the first keeps serving; a lock left by a killed Relay goes stale,
// so the next start waits at most the stale period; a lock lost while held is logged, and the
// Relay keeps serving.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually, startRelay } from '../../core/testing.ts';
import { LOCK_STALE_MS } from '../../core/db/embedded-lock.ts';
import { freePort } from '../support/relay-process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-embedded-lock-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  controlUrl: string;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `relay start` on `dataDir` and the embedded database, on free ports. */
async function relayStart(dataDir: string): Promise<Started> {
  const controlPort = await freePort();
  const child = spawn(process.execPath, [path.join(root, 'bin/relay.js'), 'start'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', RELAY_CONFIG: '', RELAY_DATA_DIR: dataDir, RELAY_HOST: '127.0.0.1',
      RELAY_PORT: String(await freePort()), RELAY_CONTROL_PORT: String(controlPort), RELAY_ADMIN_TOKEN: 'adm_embedded_lock_test_token_000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => { stdout += d; });
  child.stderr!.on('data', (d) => { stderr += d; });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, controlUrl: `http://127.0.0.1:${controlPort}`, exited };
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/livez`);
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

t.test('a second Relay on the same data directory exits with one line; the first keeps serving', { timeout: 120_000 }, async (t) => {
  const dataDir = path.join(dir, 'shared');
  const first = await startRelay({ database: 'pglite', dataDir });
  t.teardown(() => first.close());

  const startedAt = Date.now();
  const second = await relayStart(dataDir);
  const bound = setTimeout(() => second.child.kill('SIGKILL'), 60_000);
  const run = await second.exited;
  clearTimeout(bound);
  t.equal(run.code, 1, `exited 1 by itself: ${run.stderr}`);
  t.equal(run.stderr, `relay: the embedded database ${path.join(dataDir, 'pglite')} is in use by another Relay (or relay CLI command): stop it, `
    + 'give this one another RELAY_DATA_DIR, or set DATABASE_URL so that both share one Postgres\n');
  t.ok(Date.now() - startedAt < 30_000, 'refused at start');
  t.match(run.stdout, /locked by another process: waiting/, 'it said what it waited for');

  const created = await first.api('POST', '/api/users', { username: 'erin', password: 'erin password 1', role: 'viewer' });
  t.equal(created.status, 201, 'the first still writes its database');
  t.match((await first.api('GET', '/api/users')).body.items, [{ username: 'erin' }]);
});

t.test('a lock left by a killed Relay stops the next start for at most the stale period', { timeout: 180_000 }, async (t) => {
  const dataDir = path.join(dir, 'crashed');
  const lock = path.join(dataDir, 'pglite.lock');
  const holder = path.join(dataDir, 'pglite.holder.json');

  let startedAt = Date.now();
  const crashed = await relayStart(dataDir);
  t.teardown(() => { crashed.child.kill('SIGKILL'); });
  await eventually(() => answers(crashed.controlUrl), 60_000, 100);
  const firstStartMs = Date.now() - startedAt;
  t.same(JSON.parse(readFileSync(holder, 'utf8')), { pid: crashed.child.pid, hostname: os.hostname(), controlUrl: crashed.controlUrl },
    'the running Relay names its control API beside the lock');
  crashed.child.kill('SIGKILL');
  await crashed.exited;
  t.ok(existsSync(lock), 'kill -9 leaves the lock behind');

  startedAt = Date.now();
  const next = await relayStart(dataDir);
  t.teardown(() => { next.child.kill('SIGKILL'); });
  await eventually(() => answers(next.controlUrl), LOCK_STALE_MS + 60_000, 100);
  const nextStartMs = Date.now() - startedAt;
  t.ok(nextStartMs < firstStartMs + LOCK_STALE_MS + 5_000, `came up in ${nextStartMs} ms (a clean start took ${firstStartMs} ms; stale period ${LOCK_STALE_MS} ms)`);
  t.equal(JSON.parse(readFileSync(holder, 'utf8')).controlUrl, next.controlUrl, 'the record names the new holder');

  next.child.kill('SIGTERM');
  const stopped = await next.exited;
  t.equal(stopped.code, 0, stopped.stderr);
  t.match(stopped.stdout, /locked by another process: waiting/, 'it waited for the lock to go stale');
  t.notOk(existsSync(lock), 'a clean stop releases the lock');
  t.notOk(existsSync(holder), 'and removes the record');
});

t.test('a lock lost while held is logged as an error; the Relay keeps serving', { timeout: 60_000 }, async (t) => {
  const dataDir = path.join(dir, 'lost');
  const lines: string[] = [];
  const relay = await startRelay({ database: 'pglite', dataDir, logLevel: 'info', logStream: { write: (line) => { lines.push(line); } } });
  t.teardown(() => relay.close());
  rmSync(path.join(dataDir, 'pglite.lock'), { recursive: true });
  const lost = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => /the lock on the embedded database .* was lost/.test(l.msg));
  await eventually(() => lost() !== undefined, LOCK_STALE_MS, 100);
  t.equal(lost()!.level, 50, 'at error level');
  t.match(lost()!.msg, `the lock on the embedded database ${path.join(dataDir, 'pglite')} was lost`);
  t.equal((await relay.api('POST', '/api/users', { username: 'frank', password: 'frank password 1', role: 'viewer' })).status, 201, 'it still serves and writes');
});
