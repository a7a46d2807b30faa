// Relay restarted while Postgres is down starts from its last catalog snapshot, kept in the data
// directory (sealed host keys still sealed, readable by the owner only), serves inference with
// it, reports the outage only to credentialed callers, and catches up once Postgres returns.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startRelay, seedRoute, eventually, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { LOCAL_SNAPSHOT_FILE } from '../../core/catalog/local-snapshot.ts';
import { startPgCluster } from '../support/pg-cluster.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay } from '../support/relay-client.ts';

const cluster = await startPgCluster();
const upstream = await startFakeUpstream();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-snapshot-start-'));
const masterKey = generateMasterKey();
const snapshotFile = path.join(dataDir, LOCAL_SNAPSHOT_FILE);
const plugins = [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }];
const hostKeyValue = 'sk-upstream-snapshot-secret-4f1d';
let second: TestRelay | null = null;
t.teardown(async () => {
  await second?.close();
  await upstream.close();
  cluster.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

const chat = (relay: TestRelay, key: string) => viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'snap-model', messages: [{ role: 'user', content: 'hi' }] });

let relayKey = '';
let relayKeyId = '';

t.test('a running instance keeps its snapshot in the data directory', async (t) => {
  const first = await startRelay({ database: cluster.url, dataDir, masterKey, plugins });
  try {
    const seeded = await seedRoute(first, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'snap-model', hostKeys: [hostKeyValue] });
    relayKey = seeded.relayKey;
    relayKeyId = seeded.relayKeyId;
    await eventually(() => {
      try {
        return readFileSync(snapshotFile, 'utf8').includes(seeded.relayKeyId);
      } catch {
        return false;
      }
    }, 10_000, 50);
    t.equal((await chat(first, relayKey)).status, 200, 'the route serves');
  } finally {
    await first.close();
  }
  const text = readFileSync(snapshotFile, 'utf8');
  t.equal(statSync(snapshotFile).mode & 0o777, 0o600, 'readable by the owner only');
  t.notMatch(text, hostKeyValue, 'the host key is not in the file in plain text');
  t.match(text, /"sealedValue":"v1\./, 'the host key is there sealed');
  t.notMatch(text, relayKey, 'the relay key plaintext is not there');
});

t.test('with Postgres down, a new instance starts from the snapshot and serves', async (t) => {
  cluster.stop();
  second = await startRelay({ database: cluster.url, dataDir, masterKey, plugins });
  t.equal(second.relay.sync.source, 'local-snapshot');
  t.equal((await chat(second, relayKey)).status, 200, 'inference works with the saved relay key and sealed host key');
  t.equal((await chat(second, 'rk_not-a-key')).status, 401, 'an unknown key is still refused');

  for (const probe of ['/livez', '/readyz', '/healthz']) {
    const res = await fetch(`${second.inferenceUrl}${probe}`);
    const text = await res.text();
    t.equal(res.status, 200, `${probe} 200 during the outage`);
    t.notMatch(text, String(cluster.port), `${probe} does not name the database's port`);
    t.notMatch(text, /127\.0\.0\.1|database|ECONN/i, `${probe} says nothing about the infrastructure`);
  }

  const anonymous = await fetch(`${second.controlUrl}/api/health`);
  t.equal(anonymous.status, 401, 'the details need credentials');
  const detail = await second.api('GET', '/api/health');
  t.equal(detail.status, 200);
  t.equal(detail.body.database.status, 'unreachable');
  t.equal(detail.body.catalog.source, 'local-snapshot');
  t.match((await second.api('GET', '/metrics')).body, /^relay_catalog_from_local_snapshot 1$/m, '/metrics says the local snapshot serves');

  const write = await second.api('POST', '/api/providers', { metadata: { displayName: 'during' }, spec: { adapter: 'openai' } });
  t.equal(write.status, 503, 'a write while the database is down is refused');
  t.equal(write.body.error.code, 'RELAY_ERR_DATABASE_UNAVAILABLE');
});

t.test('once Postgres returns, the instance catches up', async (t) => {
  cluster.start();
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  const id = '22222222-2222-4222-8222-222222222222';
  await client.query(`INSERT INTO catalog_entities (id, kind, slug, display_name, spec) VALUES ($1, 'providers', 'after-outage', 'after outage', '{"adapter":"openai"}')`, [id]);
  await client.query('DELETE FROM catalog_entities WHERE id = $1', [relayKeyId]);
  await client.end();
  await eventually(() => second!.relay.sync.snapshot().providers.has(id), 30_000, 100);
  t.equal(second!.relay.sync.source, 'database', 'the snapshot is the database\'s again');
  t.notOk(second!.relay.sync.snapshot().relayKeys.has(relayKeyId), 'a key deleted during the outage is gone');
  t.equal((await chat(second!, relayKey)).status, 401, 'and refused');
  const detail = await second!.api('GET', '/api/health');
  t.equal(detail.body.database.status, 'ok');
  t.match((await second!.api('GET', '/metrics')).body, /^relay_catalog_from_local_snapshot 0$/m, '/metrics: the database\'s catalog again');
  await eventually(() => readFileSync(snapshotFile, 'utf8').includes(id), 10_000, 50);
  t.pass('the local snapshot is saved again from the database');
});

t.test('an unreadable snapshot is not served: with Postgres down that is a start-up failure', async (t) => {
  const otherDir = mkdtempSync(path.join(os.tmpdir(), 'relay-snapshot-bad-'));
  t.teardown(() => rmSync(otherDir, { recursive: true, force: true }));
  writeFileSync(path.join(otherDir, LOCAL_SNAPSHOT_FILE), '{"format":1,"entities":[{"kind":"nonsense"}]');
  cluster.stop();
  t.teardown(() => cluster.start());
  await t.rejects(startRelay({ database: cluster.url, dataDir: otherDir, masterKey, plugins }), { name: 'StartupError', message: /unreachable .* no local catalog snapshot/ });
});
