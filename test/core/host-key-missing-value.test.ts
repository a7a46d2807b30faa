// A host key whose value this instance cannot read (an unset environment variable) is reported
// invalid with "missing value" from the moment it is created, not healthy until a request fails
// on it (issue 38 #17).
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { client, createTestDatabase, startControl, waitFor } from '../support/control-plane.ts';

const SET_NAME = `VENDOR_KEY_SET_${randomBytes(4).toString('hex').toUpperCase()}`;
const UNSET_NAME = `VENDOR_KEY_UNSET_${randomBytes(4).toString('hex').toUpperCase()}`;
process.env[SET_NAME] = 'sk-vendor-value-from-env';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  delete process.env[SET_NAME];
  await relay.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });

async function create(kind: string, displayName: string, spec: Record<string, unknown>) {
  const res = await api('POST', `/api/${kind}`, { metadata: { displayName }, spec });
  if (res.status !== 201) throw new Error(`create ${kind}: ${res.status} ${res.text}`);
  return res.json.metadata.id as string;
}

async function healthOf(id: string) {
  await waitFor(() => relay.sync.snapshot().hostKeys.has(id), 5_000, 'the key in the snapshot');
  const res = await api('GET', '/api/host-keys/health');
  return res.json.items.find((item: { hostKeyId: string }) => item.hostKeyId === id);
}

const providerId = await create('providers', 'OpenAI', { adapter: 'openai' });
const hostId = await create('hosts', 'OpenAI US', { providerId, baseUrl: 'https://api.openai.com/v1' });

t.test('a key reading an unset variable says missing value as soon as it exists', async (t) => {
  const id = await create('host-keys', 'Unset', { hostId, valueFrom: { kind: 'env', env: UNSET_NAME } });
  const health = await healthOf(id);
  t.equal(health.state, 'invalid');
  t.equal(health.reason, `missing value: environment variable ${UNSET_NAME} is not set`);
  t.notOk('until' in health, 'no retry time: it stays until the variable is set here');
});

t.test('a key reading a set variable, or with a stored value, is healthy', async (t) => {
  const fromEnv = await healthOf(await create('host-keys', 'Set', { hostId, valueFrom: { kind: 'env', env: SET_NAME } }));
  t.same(fromEnv.state, 'healthy');
  const stored = await healthOf(await create('host-keys', 'Stored', { hostId, valueFrom: { kind: 'stored' }, value: 'sk-stored-value' }));
  t.same(stored.state, 'healthy');
  const res = await api('GET', '/api/host-keys/health');
  t.notOk(res.text.includes('sk-vendor-value-from-env') || res.text.includes('sk-stored-value'), 'no value in the answer');
});

t.test('a disabled key stays disabled, whatever its value', async (t) => {
  const id = await create('host-keys', 'Unset and off', { hostId, enabled: false, valueFrom: { kind: 'env', env: UNSET_NAME } });
  t.equal((await healthOf(id)).state, 'disabled');
});
