// Relay's catalog database going silent mid-conversation (a proxy in front of the real Postgres
// stops forwarding): an admin write fails past database.queryTimeoutMs with the same 503 as a
// database that is down, not a 500 or a hang, naming nothing of the database's URL; inference keeps
// serving from the snapshot, and once the database answers, writes go through again.
import t from 'tap';
import { createTestDatabase, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';
import { settlesWithin } from '../support/settles-within.ts';

const BOUND_MS = 30_000;
const password = 'catalog-s3cret';
const testDb = await createTestDatabase();
const proxy = await startHangingProxy(5432);
const url = new URL(testDb.url);
url.port = String(proxy.port);
url.password = password;
const lines: string[] = [];
const up = await startFakeUpstream();
const relay = await startRelay({
  database: url.toString(), config: { database: { queryTimeoutMs: 300 } },
  logLevel: 'warn', logStream: { write(line: string) { lines.push(line); } },
});
t.teardown(async () => {
  proxy.dropHeld();
  await relay.close();
  await proxy.close();
  await up.close();
  await testDb.drop();
});

const newProvider = (name: string) => relay.api('POST', '/api/providers', { metadata: { displayName: name }, spec: { adapter: 'openai' } });

t.test('a write on a silent catalog database: 503, inference serves, and writes work once it answers', async (t) => {
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'silent-db' });
  await routeLive(relay, route);

  proxy.stall();
  const write = newProvider('while silent');
  t.equal(await settlesWithin(write, BOUND_MS), 'resolved', 'answered, not hung');
  const refused = await write;
  t.equal(refused.status, 503, 'refused as a database that is down is');
  t.equal(refused.body.error.code, 'RELAY_ERR_DATABASE_UNAVAILABLE');
  t.notMatch(JSON.stringify(refused.body), password, 'nothing of the URL in the answer');
  const chat = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'silent-db', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(chat.status, 200, 'inference serves from the snapshot');

  proxy.answer();
  // Idle pool connections that went silent are each dropped at their first query past the deadline.
  let after = await newProvider('after');
  for (let i = 0; i < 12 && after.status !== 201; i++) after = await newProvider('after');
  t.equal(after.status, 201, 'the database answers again: the write goes through');
  t.notMatch(lines.join(''), password, 'nothing of the URL in the log');
});
