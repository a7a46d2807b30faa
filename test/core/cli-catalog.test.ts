// `relay catalog export` / `relay catalog apply` as an operator runs them (issue 39 #2): against
// a running Relay through its admin API (--url), on the Postgres database of a stopped one, on
// the embedded database (refused while a Relay holds it), and catalog.file applied at start.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { createTestDatabase, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin/relay.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-cli-catalog-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const masterKey = generateMasterKey();
const SECRET = 'sk-cli-catalog-secret-0042';

const configFile = path.join(dir, 'relay.yaml');
writeFileSync(configFile, 'plugins:\n  - use: vendor-openai\n  - use: vendor-anthropic\n  - use: log-file\n');

function relayCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', RELAY_CONFIG: configFile, RELAY_ADMIN_TOKEN: '', RELAY_MASTER_KEY: masterKey, RELAY_DATA_DIR: path.join(dir, 'data'), RELAY_CONTROL_PORT: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, out, err });
  }));
}

function writeCatalog(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

async function seed(relay: TestRelay): Promise<void> {
  const post = async (kind: string, slug: string, spec: Record<string, unknown>) => {
    const res = await relay.api('POST', `/api/${kind}`, { metadata: { displayName: slug.toUpperCase(), slug }, spec });
    if (res.status !== 201) throw new Error(`${kind}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.metadata.id as string;
  };
  const provider = await post('providers', 'anthropic', { adapter: 'anthropic' });
  const host = await post('hosts', 'anthropic-main', { providerId: provider, baseUrl: 'https://api.anthropic.com/v1' });
  const model = await post('models', 'claude', { bindings: [{ hostId: host, upstreamModel: 'claude-sonnet-4-5' }] });
  await post('policies', 'team', { modelIds: [model] });
  await post('host-keys', 'anthropic-key', { hostId: host, valueFrom: { kind: 'stored' }, value: SECRET });
  await post('pricings', 'claude-price', { modelId: model, inputPerMillion: 3, outputPerMillion: 15 });
}

const source = await startRelay({ masterKey });
t.teardown(() => source.close());
await seed(source);
const viaUrl = { RELAY_ADMIN_TOKEN: source.adminToken };

let exportedYaml = '';

t.test('--url: export, dry run, apply, apply again, a bad reference', async (t) => {
  const noToken = await relayCli(['catalog', 'export', '--url', source.controlUrl]);
  t.equal(noToken.code, 1);
  t.match(noToken.err, 'relay catalog --url needs RELAY_ADMIN_TOKEN');

  const exported = await relayCli(['catalog', 'export', '--url', source.controlUrl], viaUrl);
  t.equal(exported.code, 0, exported.err);
  exportedYaml = exported.out;
  t.match(exported.out, /^# Relay catalog\. Apply with: relay catalog apply -f FILE/);
  t.notOk(exported.out.includes(SECRET), 'no plaintext secret in the export');
  const doc = parseYaml(exported.out);
  t.match(doc, { version: 1, hosts: [{ slug: 'anthropic-main', spec: { providerId: 'anthropic' } }], 'host-keys': [{ sealedValue: /^v1\./ }] });

  doc.models[0].spec.contextWindow = 200_000;
  doc.policies.push({ slug: 'everyone', spec: { modelIds: ['claude'] } });
  const changed = writeCatalog('changed.yaml', JSON.stringify(doc));
  const dry = await relayCli(['catalog', 'apply', '-f', changed, '--dry-run', '--url', source.controlUrl], viaUrl);
  t.equal(dry.code, 0, dry.err);
  t.equal(dry.out, '~ update models/claude (contextWindow)\n+ create policies/everyone\n'
    + '2 changes (1 to create, 1 to update, 0 to delete), 5 unchanged; dry run: nothing was written\n');
  t.equal((await source.api('GET', '/api/policies/everyone')).status, 404, 'the dry run wrote nothing');

  const applied = await relayCli(['catalog', 'apply', '-f', changed, '--url', source.controlUrl], viaUrl);
  t.equal(applied.code, 0, applied.err);
  t.match(applied.out, '2 changes (1 to create, 1 to update, 0 to delete), 5 unchanged\n');
  t.equal((await source.api('GET', '/api/models/claude')).body.spec.contextWindow, 200_000, 'the running Relay has the change');
  const again = await relayCli(['catalog', 'apply', '-f', changed, '--url', source.controlUrl], viaUrl);
  t.equal(again.out, '0 changes, 7 unchanged\n');

  doc.pricings[0].spec.modelId = 'claud';
  const bad = await relayCli(['catalog', 'apply', '-f', writeCatalog('bad.yaml', JSON.stringify(doc)), '--url', source.controlUrl], viaUrl);
  t.equal(bad.code, 1);
  t.equal(bad.err, 'relay: relay catalog: pricings/claude-price: /spec/modelId: no model with slug "claud" in the file nor in the catalog\n');

  const restored = await relayCli(['catalog', 'apply', '-f', writeCatalog('exported.yaml', exportedYaml), '--prune', '--url', source.controlUrl], viaUrl);
  t.match(restored.out, /^~ update models\/claude \(contextWindow\)\n- delete policies\/everyone\n/);
});

t.test('the database of a stopped Relay (Postgres): apply reproduces the export; twice is a no-op', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const env = { DATABASE_URL: database.url };
  const file = writeCatalog('exported.yaml', exportedYaml);
  const applied = await relayCli(['catalog', 'apply', '-f', file], env);
  t.equal(applied.code, 0, applied.err);
  t.match(applied.out, /^\+ create providers\/anthropic\n/);
  t.match(applied.out, '6 changes (6 to create, 0 to update, 0 to delete), 0 unchanged\n');
  const again = await relayCli(['catalog', 'apply', '-f', file], env);
  t.equal(again.out, '0 changes, 6 unchanged\n', again.err);
  const exported = await relayCli(['catalog', 'export'], env);
  t.equal(exported.code, 0, exported.err);
  t.equal(exported.out, exportedYaml, 'the same file, byte for byte');

  const wrongKey = await relayCli(['catalog', 'apply', '-f', file], { ...env, RELAY_MASTER_KEY: generateMasterKey(), DATABASE_URL: (await createTestDatabase().then((d) => { t.teardown(() => d.drop()); return d.url; })) });
  t.equal(wrongKey.code, 1);
  t.match(wrongKey.err, /^relay: host-keys\/anthropic-key: \/sealedValue: does not open with this instance's RELAY_MASTER_KEY/);
  t.equal(wrongKey.err.split('\n').length, 2, 'one line, no stack');
});

t.test('the embedded database: written when no Relay holds it, refused while one does', async (t) => {
  const dataDir = path.join(dir, 'embedded');
  const env = { RELAY_DATA_DIR: dataDir };
  const applied = await relayCli(['catalog', 'apply', '-f', writeCatalog('exported.yaml', exportedYaml)], env);
  t.equal(applied.code, 0, applied.err);
  t.match(applied.out, '6 changes');

  const running = await startRelay({ database: 'pglite', dataDir, masterKey });
  t.teardown(() => running.close());
  t.equal((await running.api('GET', '/api/models/claude')).status, 200, 'the Relay started on it serves the applied catalog');
  const audit = await running.api('GET', '/api/audit');
  const created = audit.body.items as Array<{ actor: { kind: string }; method: string; route: string; target: string; targetName: string; status: number }>;
  t.same(created.map((e) => `${e.actor.kind} ${e.method} ${e.route} ${e.targetName}`).reverse(), [
    'cli CATALOG create providers anthropic', 'cli CATALOG create hosts anthropic-main', 'cli CATALOG create models claude',
    'cli CATALOG create policies team', 'cli CATALOG create host-keys anthropic-key', 'cli CATALOG create pricings claude-price',
  ], "the audit trail has a row per entity the CLI's apply created, in the order it wrote them");
  t.equal(created.find((e) => e.targetName === 'claude')!.target, (await running.api('GET', '/api/models/claude')).body.metadata.id, "each names the entity's id");
  // relayCli's control port (1) is not the running Relay's: the data directory names it.
  const refused = await relayCli(['catalog', 'export'], env);
  t.equal(refused.code, 1);
  t.match(refused.err, `a Relay is running on the embedded database and holds it (${dataDir}; its control API is ${running.controlUrl}); set RELAY_ADMIN_TOKEN`);
  const through = await relayCli(['catalog', 'export'], { ...env, RELAY_ADMIN_TOKEN: running.adminToken });
  t.equal(through.code, 0, through.err);
  t.equal(through.out, exportedYaml);
});

t.test('catalog.file at start: applied before serving; a bad one stops the start naming the entity', async (t) => {
  const file = writeCatalog('gitops.yaml', exportedYaml);
  const relay = await startRelay({ masterKey, config: { catalog: { file } } });
  t.teardown(() => relay.close());
  t.equal((await relay.api('GET', '/api/host-keys/anthropic-key')).body.spec.hasValue, true);
  t.ok([...relay.relay.sync.snapshot().byKind('models').values()].some((m) => m.metadata.slug === 'claude'));
  type Row = { actor: { kind: string; name: string | null }; method: string; route: string; target: string; targetName: string };
  const rows = async (r: TestRelay) => ((await r.api('GET', '/api/audit')).body.items as Row[]).filter((e) => e.actor.kind === 'catalog-file');
  const applied = await rows(relay);
  t.equal(applied.length, 6, 'the audit trail has a row per entity the file created');
  t.match(applied.find((e) => e.targetName === 'claude'), { actor: { kind: 'catalog-file', name: file }, method: 'CATALOG', route: 'create models',
    target: (await relay.api('GET', '/api/models/claude')).body.metadata.id }, "under the file's path, naming the entity");
  t.notOk(JSON.stringify(applied).includes(SECRET), 'no secret in the rows');

  await t.test('a later start records what the file changed, and nothing when it changed nothing', { skip: relay.databaseUrl === null ? 'the embedded database has one instance' : false }, async (t) => {
    const changed = writeCatalog('gitops-changed.yaml', exportedYaml.replace('inputPerMillion: 3', 'inputPerMillion: 4'));
    const second = await startRelay({ masterKey, database: relay.databaseUrl!, config: { catalog: { file: changed } } });
    await second.close();
    const third = await startRelay({ masterKey, database: relay.databaseUrl!, config: { catalog: { file: changed } } });
    t.teardown(() => third.close());
    const after = await rows(third);
    t.equal(after.length, 7, 'one more row: the second start changed one entity, the third none');
    t.match(after[0], { actor: { name: changed }, route: 'update pricings: inputPerMillion', targetName: 'claude-price' });
  });

  const bad = writeCatalog('gitops-bad.yaml', exportedYaml.replace('providerId: anthropic', 'providerId: nobody'));
  await t.rejects(startRelay({ masterKey, config: { catalog: { file: bad } } }),
    { message: `catalog.file ${bad}: hosts/anthropic-main: /spec/providerId: no provider with slug "nobody" in the file nor in the catalog` });
});

t.test('argument errors', async (t) => {
  const noFile = await relayCli(['catalog', 'apply']);
  t.equal(noFile.code, 1);
  t.match(noFile.err, 'relay catalog apply needs -f FILE');
  const unknown = await relayCli(['catalog', 'sync']);
  t.match(unknown.err, 'usage: relay catalog export');
  const missing = await relayCli(['catalog', 'apply', '-f', path.join(dir, 'nope.yaml')]);
  t.match(missing.err, 'nope.yaml: cannot read the catalog file (ENOENT)');
  const yaml = await relayCli(['catalog', 'apply', '-f', writeCatalog('broken.yaml', 'version: 1\nhosts: [\n')]);
  t.match(yaml.err, /broken\.yaml: not valid YAML/);
});
