// Master-key rotation: host-key values sealed under key A are re-encrypted under key B when Relay
// starts with B as RELAY_MASTER_KEY and A as RELAY_MASTER_KEY_PREVIOUS (and by the offline
// `relay master-key rotate`); afterwards a Relay holding only B serves with those host keys.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import t from 'tap';
import { Sealer, generateMasterKey, parseMasterKey } from '../../core/crypto/sealing.ts';
import { configValuesSealedUnder } from '../../core/crypto/config-sealed.ts';
import { createTestDatabase, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const HOST_KEYS = ['sk-rotation-upstream-one-7f3a', 'sk-rotation-upstream-two-91bc'];
const keyA = generateMasterKey();
const keyB = generateMasterKey();
const keyC = generateMasterKey();
const database = await createTestDatabase();
const up = await startFakeUpstream({ apiKey: HOST_KEYS });
const sql = new pg.Client({ connectionString: database.url });
t.teardown(async () => {
  await sql.end().catch(() => undefined);
  await up.close();
  await database.drop();
});

function boot(current: string, previous: string | undefined, logs?: string[]): Promise<TestRelay> {
  return startRelay({
    database: database.url,
    masterKey: current,
    env: { RELAY_MASTER_KEY_PREVIOUS: previous },
    ...(logs ? { logLevel: 'info', logStream: { write: (line: string) => { logs.push(line); } } } : {}),
  });
}

async function sealedValues(): Promise<string[]> {
  const res = await sql.query<{ sealed_value: string }>("SELECT sealed_value FROM catalog_entities WHERE kind = 'host-keys' ORDER BY display_name");
  return res.rows.map((r) => r.sealed_value);
}

const idA = parseMasterKey(keyA).id;
const idB = parseMasterKey(keyB).id;
const idC = parseMasterKey(keyC).id;

// Seed under key A alone.
const first = await boot(keyA, undefined);
const seeded = await seedRoute(first, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'rotation-model', hostKeys: HOST_KEYS });
await first.close();
await sql.connect();

t.test('values are sealed under key A at first', async (t) => {
  const values = await sealedValues();
  t.equal(values.length, 2);
  for (const v of values) t.equal(Sealer.keyIdOf(v), idA, 'names key A');
});

t.test('a start with B current and A previous re-encrypts every value under B', async (t) => {
  const logs: string[] = [];
  const before = await sealedValues();
  const second = await boot(keyB, keyA, logs);
  await second.close();
  const after = await sealedValues();
  const onlyB = new Sealer(parseMasterKey(keyB));
  t.equal(after.length, 2);
  for (const v of after) t.equal(Sealer.keyIdOf(v), idB, 'names key B');
  t.same(after.map((v) => onlyB.open(v)).sort(), [...HOST_KEYS].sort(), 'key B alone opens them');
  t.notSame(after, before, 'the ciphertext changed');
  const line = logs.map((l) => JSON.parse(l) as { msg: string; resealed?: number }).find((l) => l.msg.startsWith('master-key rotation'));
  t.equal(line?.resealed, 2, 'the count is logged');
  const all = logs.join('\n');
  for (const secret of [...HOST_KEYS, keyA, keyB]) t.notOk(all.includes(secret), 'no value or key in the log');
});

t.test('a second start with the same pair re-encrypts nothing', async (t) => {
  const logs: string[] = [];
  const before = await sealedValues();
  const again = await boot(keyB, keyA, logs);
  await again.close();
  t.same(await sealedValues(), before, 'unchanged');
  const line = logs.map((l) => JSON.parse(l) as { msg: string; resealed?: number; current?: number }).find((l) => l.msg.startsWith('master-key rotation'));
  t.match(line, { resealed: 0, current: 2 });
});

t.test('a Relay with only key B serves requests with the rotated host keys', async (t) => {
  const third = await boot(keyB, undefined);
  t.teardown(() => third.close());
  await settled(third, (snap) => snap.relayKeys.has(seeded.relayKeyId));
  up.reset();
  const res = await viaRelay(third, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'rotation-model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200, 'served');
  // Keys are picked by weight, so either may serve; the fake refuses any other credential.
  t.ok(HOST_KEYS.map((k) => `Bearer ${k}`).includes(String(up.requests[0]?.headers.authorization)), 'the upstream got a rotated host key');
});

t.test('relay master-key rotate does the same offline (B to C)', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-rotate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'relay.json');
  // S3 credentials sealed into the config under B: not in the database, so only named.
  const underB = new Sealer(parseMasterKey(keyB));
  const s3 = { bucket: 'payloads', credentials: { sealed: { accessKeyId: underB.seal('AKIA-ROTATION'), secretAccessKey: underB.seal('s3-secret-rotation') } } };
  writeFileSync(configFile, JSON.stringify({ database: { url: database.url }, dataDir: dir, plugins: [{ use: 'payload-s3', options: s3 }] }));
  const bin = path.resolve(import.meta.dirname, '../../bin/relay.js');
  const env = { ...process.env, RELAY_MASTER_KEY: keyC, RELAY_MASTER_KEY_PREVIOUS: keyB };
  const done = await promisify(execFile)(process.execPath, [bin, 'master-key', 'rotate', '--config', configFile], { env, timeout: 30_000 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (e: { code: number; stdout: string; stderr: string }) => e);
  const { stdout, stderr } = done;
  t.equal(done.code, 2, 'exit 2: the config still holds values under the previous key');
  t.match(stdout, /re-encrypted 2 host-key value\(s\) under master key/);
  t.match(stdout, 'config /plugins/0/options/credentials/sealed/accessKeyId: sealed under the previous key; re-seal it with relay master-key seal');
  t.match(stdout, 'config /plugins/0/options/credentials/sealed/secretAccessKey: sealed under the previous key');
  for (const secret of [...HOST_KEYS, keyB, keyC, 'AKIA-ROTATION', 's3-secret-rotation', s3.credentials.sealed.secretAccessKey]) {
    t.notOk(stdout.includes(secret) || stderr.includes(secret), 'no secret printed');
  }
  const values = await sealedValues();
  const onlyC = new Sealer(parseMasterKey(keyC));
  for (const v of values) t.equal(Sealer.keyIdOf(v), idC, 'names key C');
  t.same(values.map((v) => onlyC.open(v)).sort(), [...HOST_KEYS].sort());
});

t.test('without both keys the command refuses', async (t) => {
  const bin = path.resolve(import.meta.dirname, '../../bin/relay.js');
  const env = { ...process.env, RELAY_MASTER_KEY: keyC, RELAY_MASTER_KEY_PREVIOUS: '' };
  const err = await promisify(execFile)(process.execPath, [bin, 'master-key', 'rotate'], { env, timeout: 30_000 }).then(() => null, (e: { code: number; stderr: string }) => e);
  t.equal(err?.code, 1);
  t.match(err?.stderr, /needs RELAY_MASTER_KEY/);
});

/** `relay master-key seal` with `input` on stdin. */
function seal(input: string, env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = path.resolve(import.meta.dirname, '../../bin/relay.js');
  const child = spawn(process.execPath, [bin, 'master-key', 'seal'], { env: { ...process.env, RELAY_MASTER_KEY_PREVIOUS: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

t.test('relay master-key seal seals a value from stdin for the config, and re-seals one during a rotation', async (t) => {
  const secret = 'AKIA example with spaces ✓';
  const sealed = await seal(`${secret}\n`, { RELAY_MASTER_KEY: keyA });
  t.equal(sealed.code, 0);
  const value = sealed.stdout.trim();
  t.equal(Sealer.keyIdOf(value), idA, 'sealed under the current key');
  t.equal(new Sealer(parseMasterKey(keyA)).open(value), secret, 'opens to the value, its trailing newline dropped');
  t.notOk(sealed.stdout.includes(secret) || sealed.stderr.includes(secret), 'the value is not echoed');

  const resealed = await seal(value, { RELAY_MASTER_KEY: keyB, RELAY_MASTER_KEY_PREVIOUS: keyA });
  t.equal(resealed.code, 0);
  t.equal(Sealer.keyIdOf(resealed.stdout.trim()), idB, 're-sealed under the new key');
  t.equal(new Sealer(parseMasterKey(keyB)).open(resealed.stdout.trim()), secret, 'the new key alone opens it');

  const unknown = await seal(value, { RELAY_MASTER_KEY: keyC });
  t.equal(unknown.code, 1, 'a value under a key that is not configured is refused');
  t.match(unknown.stderr, `sealed under master key ${idA}; set that key as RELAY_MASTER_KEY_PREVIOUS`);
  const cut = await seal(value.slice(0, -4), { RELAY_MASTER_KEY: keyA });
  t.equal(cut.code, 1, 'a damaged sealed value is refused');
  t.match(cut.stderr, 'does not open');
  const empty = await seal('', { RELAY_MASTER_KEY: keyA });
  t.equal(empty.code, 1);
  t.match(empty.stderr, 'no value on stdin');
  const noKey = await seal(secret, { RELAY_MASTER_KEY: '' });
  t.equal(noKey.code, 1);
  t.match(noKey.stderr, 'needs RELAY_MASTER_KEY');
  for (const r of [unknown, cut, empty, noKey]) t.notOk(r.stderr.includes(secret) || r.stdout.includes(secret), 'never the value in an error');
});

t.test('config values sealed under a key are found by JSON pointer, keys escaped, values never returned', async (t) => {
  const underA = new Sealer(parseMasterKey(keyA));
  const underB = new Sealer(parseMasterKey(keyB));
  const config = { plugins: [{ use: 'x', options: { 'a/b~c': underA.seal('one'), list: ['plain', underA.seal('two'), underB.seal('three')], n: 3, nil: null } }], top: underA.seal('four') };
  t.same(configValuesSealedUnder(config, idA), ['/plugins/0/options/a~1b~0c', '/plugins/0/options/list/1', '/top']);
  t.same(configValuesSealedUnder(config, idB), ['/plugins/0/options/list/2']);
  t.same(configValuesSealedUnder(underA.seal('whole'), idA), ['/'], 'a sealed string alone');
  t.same(configValuesSealedUnder({ a: 'v1.not.a.sealed', b: 'v2.x.y.z.w' }, 'not'), [], 'only the v1 five-part form counts');
});
