// Two Relay instances on one Postgres: a catalog write through one reaches the other's
// in-memory snapshot within the spec's ~1 s (NOTIFY -> re-read -> new snapshot).
import t from 'tap';
import { createTestDatabase, startRelay, eventually } from '../../core/testing.ts';

const db = await createTestDatabase();
const plugins = [{ use: 'auth-bearer' }, { use: 'wire-canonical' }, { use: 'vendor-openai' }];
const a = await startRelay({ database: db.url, plugins });
const b = await startRelay({ database: db.url, plugins });
t.teardown(async () => {
  await a.close();
  await b.close();
  await db.drop();
});

t.test('a create through one instance is in the other snapshot within 1 s', async (t) => {
  const res = await a.api('POST', '/api/providers', { metadata: { displayName: 'prop' }, spec: { adapter: 'openai' } });
  t.equal(res.status, 201);
  const ms = await eventually(() => b.relay.sync.snapshot().providers.has(res.body.metadata.id), 1_000, 5);
  t.ok(ms <= 1_000, `propagated in ${ms} ms`);
});

t.test('updates and deletes propagate too', async (t) => {
  const created = await b.api('POST', '/api/rate-limits', { metadata: { displayName: 'rl' }, spec: { requestsPerMinute: 5 } });
  const id = created.body.metadata.id;
  await eventually(() => a.relay.sync.snapshot().rateLimits.has(id), 1_000, 5);
  await b.api('PUT', `/api/rate-limits/by-id/${id}`, { spec: { requestsPerMinute: 7 } });
  await eventually(() => a.relay.sync.snapshot().rateLimits.get(id)?.spec.requestsPerMinute === 7, 1_000, 5);
  await b.api('DELETE', `/api/rate-limits/by-id/${id}`);
  await eventually(() => !a.relay.sync.snapshot().rateLimits.has(id), 1_000, 5);
  t.pass('update and delete seen by the other instance');
});

t.test('a rotated relay key stops working on the other instance at once', async (t) => {
  const policy = await a.api('POST', '/api/policies', { metadata: { displayName: 'p' }, spec: { modelIds: '*' } });
  const key = await a.api('POST', '/api/relay-keys', { metadata: { displayName: 'k' }, spec: { policyId: policy.body.metadata.id } });
  const id = key.body.relayKey.metadata.id;
  await eventually(() => b.relay.sync.snapshot().relayKeys.has(id), 1_000, 5);
  const oldHash = b.relay.sync.snapshot().relayKeys.get(id)!.keyHash;
  const rotated = await a.api('POST', `/api/relay-keys/by-id/${id}/rotate`);
  t.equal(rotated.status, 200);
  await eventually(() => b.relay.sync.snapshot().relayKeys.get(id)!.keyHash !== oldHash, 1_000, 5);
  const listWith = (k: string) => fetch(`${b.inferenceUrl}/v1/models`, { headers: { authorization: `Bearer ${k}` } }).then((r) => r.status);
  t.equal(await listWith(key.body.plaintext), 401, 'the old plaintext is refused');
  t.equal(await listWith(rotated.body.plaintext), 200, 'the new plaintext works');
});
