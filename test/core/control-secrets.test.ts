// Secret material through the control API: relay keys (plaintext once, sha256 in the
// database, rotation refused at once on another instance), host keys (sealed with the master
// key, never returned), and no secret in any log line.
import t from 'tap';
import { hashSecret } from '../../core/crypto/relay-keys.ts';
import { Sealer, parseMasterKey } from '../../core/crypto/sealing.ts';
import { addAdminUser, client, createTestDatabase, startControl, waitFor } from '../support/control-plane.ts';

const logLines: string[] = [];
const logStream = { write: (line: string) => { logLines.push(line); } };
const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url, logStream });
const other = await startControl({ databaseUrl: database.url, adminToken: relay.adminToken, masterKey: relay.masterKey!, logStream });
t.teardown(async () => {
  await relay.close();
  await other.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });
const secrets: string[] = [relay.adminToken, relay.masterKey!];

async function create(kind: string, displayName: string, spec: Record<string, unknown>) {
  const res = await api('POST', `/api/${kind}`, { metadata: { displayName }, spec });
  if (res.status !== 201) throw new Error(`create ${kind}: ${res.status} ${res.text}`);
  return res.json;
}

const provider = await create('providers', 'OpenAI', { adapter: 'openai' });
const host = await create('hosts', 'OpenAI', { providerId: provider.metadata.id, baseUrl: 'https://api.openai.com/v1' });
const policy = await create('policies', 'Everything', { modelIds: '*' });

t.test('relay keys: plaintext once, only sha256 and prefix stored', async (t) => {
  const res = await api('POST', '/api/relay-keys', { metadata: { displayName: 'CI key' }, spec: { policyId: policy.metadata.id } });
  t.equal(res.status, 201);
  const { plaintext, relayKey } = res.json;
  secrets.push(plaintext);
  t.match(plaintext, /^rk_[A-Za-z0-9_-]{40,}$/);
  t.equal(relayKey.spec.prefix, plaintext.slice(0, 9));
  t.notOk('keyHash' in relayKey, 'no hash in the answer');
  t.match(relayKey.spec, { policyId: policy.metadata.id, enabled: true, payloadLoggingEnabled: false });

  const row = await relay.db.query<Record<string, unknown>>('SELECT * FROM catalog_entities WHERE id = $1', [relayKey.metadata.id]);
  t.equal(row.rows[0].secret_hash, hashSecret(plaintext), 'the database holds sha256(plaintext)');
  t.notOk(JSON.stringify(row.rows[0]).includes(plaintext), 'and never the plaintext');

  for (const path of [`/api/relay-keys/${relayKey.metadata.id}`, `/api/relay-keys/${relayKey.metadata.slug}`, '/api/relay-keys']) {
    const read = await api('GET', path);
    t.notOk(read.text.includes(plaintext), `${path}: no plaintext`);
    t.notOk(read.text.includes(hashSecret(plaintext)), `${path}: no hash`);
    t.notOk(read.text.includes('keyHash'), `${path}: no keyHash field`);
  }

  const missingPolicy = await api('POST', '/api/relay-keys', { metadata: { displayName: 'x' }, spec: {} });
  t.equal(missingPolicy.status, 400);
  t.equal(missingPolicy.json.error.field, '/spec/policyId');
});

t.test('rotate: a new secret, and the old one is refused at once on every instance', async (t) => {
  const created = await api('POST', '/api/relay-keys', { metadata: { displayName: 'Rotating' }, spec: { policyId: policy.metadata.id } });
  const { plaintext: oldKey, relayKey } = created.json;
  secrets.push(oldKey);
  const oldHash = hashSecret(oldKey);
  await waitFor(() => other.sync.snapshot().relayKeyByHash(oldHash) !== undefined, 2_000, 'the key on the other instance');

  const rotated = await api('POST', `/api/relay-keys/by-id/${relayKey.metadata.id}/rotate`);
  t.equal(rotated.status, 200);
  const newKey = rotated.json.plaintext;
  secrets.push(newKey);
  t.not(newKey, oldKey);
  t.equal(rotated.json.relayKey.metadata.id, relayKey.metadata.id, 'same entity');
  t.equal(rotated.json.relayKey.spec.prefix, newKey.slice(0, 9), 'new prefix');
  const started = Date.now();
  // Inference authenticates by looking the hash up in the snapshot; on both instances the old
  // hash must be gone and the new one present, well within the spec's 1 s.
  await waitFor(() => other.sync.snapshot().relayKeyByHash(oldHash) === undefined && relay.sync.snapshot().relayKeyByHash(oldHash) === undefined, 1_000, 'the old key to be refused');
  t.ok(Date.now() - started < 1_000, `refused after ${Date.now() - started} ms`);
  t.equal(other.sync.snapshot().relayKeyByHash(hashSecret(newKey))?.metadata.id, relayKey.metadata.id, 'the new key is accepted');
  const row = await relay.db.query<{ secret_hash: string }>('SELECT secret_hash FROM catalog_entities WHERE id = $1', [relayKey.metadata.id]);
  t.equal(row.rows[0].secret_hash, hashSecret(newKey));

  t.equal((await api('POST', '/api/relay-keys/by-id/00000000-0000-4000-8000-000000000000/rotate')).status, 404);
});

t.test('disable and expiry through PUT', async (t) => {
  const created = await api('POST', '/api/relay-keys', { metadata: { displayName: 'Temp' }, spec: { policyId: policy.metadata.id } });
  secrets.push(created.json.plaintext);
  const id = created.json.relayKey.metadata.id;
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const res = await api('PUT', `/api/relay-keys/by-id/${id}`, { spec: { enabled: false, expiresAt } });
  t.equal(res.status, 200);
  t.match(res.json.spec, { enabled: false, expiresAt });
  await waitFor(() => other.sync.snapshot().relayKeys.get(id)?.spec.enabled === false, 1_000, 'disable to propagate');
  const bad = await api('PUT', `/api/relay-keys/by-id/${id}`, { spec: { expiresAt: 'tomorrow' } });
  t.equal(bad.status, 400);
  t.equal(bad.json.error.field, '/spec/expiresAt');
  const cleared = await api('PUT', `/api/relay-keys/by-id/${id}`, { spec: { expiresAt: null, enabled: true } });
  t.equal(cleared.json.spec.expiresAt, null);
});

t.test('host keys: stored values are sealed, never returned', async (t) => {
  const upstreamSecret = 'sk-upstream-0123456789abcdefSECRET';
  secrets.push(upstreamSecret);
  const res = await api('POST', '/api/host-keys', {
    metadata: { displayName: 'Stored key' },
    spec: { hostId: host.metadata.id, valueFrom: { kind: 'stored' }, value: upstreamSecret },
  });
  t.equal(res.status, 201, res.text);
  t.notOk(res.text.includes(upstreamSecret), 'the answer has no value');
  t.equal(res.json.spec.hasValue, true);
  t.notOk('value' in res.json.spec);
  t.notOk('sealedValue' in res.json);
  const id = res.json.metadata.id;

  const row = await relay.db.query<{ spec: Record<string, unknown>; sealed_value: string }>('SELECT spec, sealed_value FROM catalog_entities WHERE id = $1', [id]);
  t.notOk(JSON.stringify(row.rows[0]).includes(upstreamSecret), 'no plaintext in the row');
  t.notOk('value' in row.rows[0].spec, 'value is not in the stored spec');
  const opened = new Sealer(parseMasterKey(relay.masterKey!)).open(row.rows[0].sealed_value);
  t.equal(opened, upstreamSecret, 'the ciphertext opens with the master key');

  for (const path of [`/api/host-keys/${id}`, '/api/host-keys']) {
    const read = await api('GET', path);
    t.notOk(read.text.includes(upstreamSecret), `${path}: no value`);
    t.notOk(read.text.includes(row.rows[0].sealed_value), `${path}: no ciphertext`);
  }

  // Replacing the value re-seals it; switching to env forgets it.
  const replaced = await api('PUT', `/api/host-keys/by-id/${id}`, { spec: { value: 'sk-second-value-xyz' } });
  secrets.push('sk-second-value-xyz');
  t.equal(replaced.status, 200);
  const row2 = await relay.db.query<{ sealed_value: string }>('SELECT sealed_value FROM catalog_entities WHERE id = $1', [id]);
  t.equal(new Sealer(parseMasterKey(relay.masterKey!)).open(row2.rows[0].sealed_value), 'sk-second-value-xyz');
  const toEnv = await api('PUT', `/api/host-keys/by-id/${id}`, { spec: { valueFrom: { kind: 'env', env: 'UPSTREAM_KEY' } } });
  t.equal(toEnv.status, 200);
  t.equal(toEnv.json.spec.hasValue, false);
  const row3 = await relay.db.query<{ sealed_value: string | null }>('SELECT sealed_value FROM catalog_entities WHERE id = $1', [id]);
  t.equal(row3.rows[0].sealed_value, null, 'the stored secret is dropped');
  const backToStored = await api('PUT', `/api/host-keys/by-id/${id}`, { spec: { valueFrom: { kind: 'stored' } } });
  t.equal(backToStored.status, 400, 'stored without a value');
  t.equal(backToStored.json.error.field, '/spec/value');
});

t.test('host keys: env mode and the 400s', async (t) => {
  const env = await api('POST', '/api/host-keys', { metadata: { displayName: 'Env key' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'env', env: 'OPENAI_API_KEY' } } });
  t.equal(env.status, 201);
  t.same(env.json.spec.valueFrom, { kind: 'env', env: 'OPENAI_API_KEY' });
  t.equal(env.json.spec.hasValue, false);
  const noValue = await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'stored' } } });
  t.equal(noValue.status, 400);
  t.equal(noValue.json.error.field, '/spec/value');
  const noEnv = await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'env' } } });
  t.equal(noEnv.status, 400);
  t.equal(noEnv.json.error.field, '/spec/valueFrom/env');
  const valueWithEnv = await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'env', env: 'A' }, value: 'sk-zzz-not-kept' } });
  t.equal(valueWithEnv.status, 400);
  t.notOk(valueWithEnv.text.includes('sk-zzz-not-kept'), 'the value is not echoed');
  // A host key's value goes to a URL the catalog's editor chooses: Relay's own variables are refused.
  for (const name of ['RELAY_MASTER_KEY', 'relay_admin_token', 'RELAY_ADMIN_PASSWORD', 'DATABASE_URL', 'VALKEY_URL', 'PGPASSWORD', 'AWS_SECRET_ACCESS_KEY']) {
    const reserved = await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'env', env: name } } });
    t.equal(reserved.status, 400, `${name} refused`);
    t.equal(reserved.json.error.field, '/spec/valueFrom/env');
    t.match(reserved.json.error.message, /Relay's own settings/);
  }
  const toReserved = await api('PUT', `/api/host-keys/by-id/${env.json.metadata.id}`, { spec: { valueFrom: { kind: 'env', env: 'RELAY_MASTER_KEY' } } });
  t.equal(toReserved.status, 400, 'nor can a key be switched to one');
  t.same((await api('GET', `/api/host-keys/${env.json.metadata.id}`)).json.spec.valueFrom, { kind: 'env', env: 'OPENAI_API_KEY' }, 'and it is unchanged');
  const badKind = await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'vault' } } });
  t.equal(badKind.status, 400);
  t.match(badKind.json.error.field, /^\/spec\/valueFrom/);
});

t.test('without a master key a stored value is a clear 400', async (t) => {
  const noKey = await startControl({ databaseUrl: database.url, masterKey: false, adminToken: relay.adminToken });
  t.teardown(() => noKey.close());
  const res = await client(noKey.url, { token: relay.adminToken })('POST', '/api/host-keys', {
    metadata: { displayName: 'Needs a key' }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'stored' }, value: 'sk-never-stored' },
  });
  t.equal(res.status, 400);
  t.equal(res.json.error.code, 'RELAY_ERR_MASTER_KEY_MISSING');
  t.match(res.json.error.message, /RELAY_MASTER_KEY/);
  t.notOk(res.text.includes('sk-never-stored'));
  const rows = await relay.db.query("SELECT 1 FROM catalog_entities WHERE display_name = 'Needs a key'");
  t.equal(rows.rows.length, 0, 'nothing stored');
});

t.test('host-key health', async (t) => {
  const res = await api('GET', '/api/host-keys/health');
  t.equal(res.status, 200);
  t.ok(res.json.items.length >= 1);
  for (const item of res.json.items) t.match(item, { hostKeyId: /^[0-9a-f-]{36}$/, state: /^(healthy|cooling|open|half-open|invalid|disabled)$/ });
});

t.test('sign-in secrets stay out of answers and logs', async (t) => {
  await addAdminUser(relay, 'ada', 'p4ssword-in-log-check');
  secrets.push('p4ssword-in-log-check');
  const res = await client(relay.url)('POST', '/api/auth/login', { username: 'ada', password: 'p4ssword-in-log-check' });
  t.equal(res.status, 200);
  secrets.push(res.headers.get('set-cookie')!.split(';')[0].split('=')[1]);
  const wrong = await client(relay.url)('POST', '/api/auth/login', { username: 'ada', password: 'wrong-p4ssword-xyz' });
  t.notOk(wrong.text.includes('wrong-p4ssword-xyz'));
  secrets.push('wrong-p4ssword-xyz');
});

t.test('no secret in any log line', async (t) => {
  const everything = logLines.join('\n');
  t.ok(logLines.length > 0, 'something was logged');
  for (const secret of secrets) t.notOk(everything.includes(secret), `secret ${secret.slice(0, 4)}… not logged`);
});
