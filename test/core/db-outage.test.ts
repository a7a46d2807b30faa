// Postgres stopped under a running Relay: the probes stay 200 (the snapshot serves, and a
// liveness probe must not restart every pod), /api/health reports the outage within seconds,
// and once Postgres is back it says so and the snapshot is rebuilt (including a change made
// while this instance could not listen).
import t from 'tap';
import pg from 'pg';
import { startRelay, eventually } from '../../core/testing.ts';
import { startPgCluster } from '../support/pg-cluster.ts';

const cluster = await startPgCluster();
const relay = await startRelay({ database: cluster.url, plugins: [{ use: 'auth-bearer' }, { use: 'wire-canonical' }] });
t.teardown(async () => {
  await relay.close();
  cluster.destroy();
});

const health = () => fetch(`${relay.inferenceUrl}/healthz`).then((r) => r.status);
const database = async () => (await relay.api('GET', '/api/health')).body.database.status as string;

let createdId = '';

t.test('healthy at first', async (t) => {
  t.equal(await health(), 200);
  t.equal(await database(), 'ok');
  const created = await relay.api('POST', '/api/providers', { metadata: { displayName: 'before' }, spec: { adapter: 'openai' } });
  createdId = created.body.metadata.id;
  await eventually(() => relay.relay.sync.snapshot().providers.has(createdId));
});

t.test('the outage is reported within seconds; the probes stay 200 and the snapshot stays', async (t) => {
  cluster.stop();
  const ms = await eventually(async () => (await database()) === 'unreachable', 5_000, 100);
  t.ok(ms < 5_000, `reported after ${ms} ms`);
  for (const probe of ['/healthz', '/readyz', '/livez']) t.equal((await fetch(`${relay.inferenceUrl}${probe}`)).status, 200, `${probe} 200`);
  const body = await (await fetch(`${relay.inferenceUrl}/healthz`)).text();
  t.notMatch(body, new RegExp(`database|${cluster.port}`), 'the public probe names no database');
  t.ok(relay.relay.sync.snapshot().providers.has(createdId), 'the snapshot still serves');
  const write = await relay.api('POST', '/api/providers', { metadata: { displayName: 'during' }, spec: { adapter: 'openai' } });
  t.equal(write.status, 503, 'a write while the database is down is refused with 503');
  t.equal(write.body.error.code, 'RELAY_ERR_DATABASE_UNAVAILABLE');
  t.notMatch(JSON.stringify(write.body), /stack|at .*\.ts/, 'no internals in the error');
});

t.test('ok again after Postgres returns, and the snapshot is rebuilt', async (t) => {
  cluster.start();
  // A change made directly in the database while Relay was not listening: only a rebuild finds it.
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  const id = '11111111-1111-4111-8111-111111111111';
  await client.query(`INSERT INTO catalog_entities (id, kind, slug, display_name, spec) VALUES ($1, 'providers', 'during-outage', 'during outage', '{"adapter":"openai"}')`, [id]);
  await client.end();
  await eventually(async () => (await database()) === 'ok', 10_000, 100);
  await eventually(() => relay.relay.sync.snapshot().providers.has(id), 20_000, 100);
  t.pass('the snapshot has the change made during the outage');
});
