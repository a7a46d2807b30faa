// Clients and shell helpers (the README's api()) send content-type: application/json on every
// control request. An empty body with that header is no body: DELETE and the POST actions work;
// a route that needs a body still gets a 400 naming it; a body that is not JSON is still a 400.
import t from 'tap';
import { createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});

const send = async (method: string, path: string, body?: string) => {
  const res = await fetch(`${relay.url}${path}`, {
    method, body, headers: { authorization: `Bearer ${relay.adminToken}`, 'content-type': 'application/json' },
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
};

t.test('an empty JSON body is no body', async (t) => {
  const provider = await send('POST', '/api/providers', JSON.stringify({ metadata: { displayName: 'p' }, spec: { adapter: 'openai' } }));
  t.equal(provider.status, 201);
  const policy = await send('POST', '/api/policies', JSON.stringify({ metadata: { displayName: 'pol' }, spec: { modelIds: '*' } }));
  const key = await send('POST', '/api/relay-keys', JSON.stringify({ metadata: { displayName: 'k' }, spec: { policyId: policy.json.metadata.id } }));
  t.equal((await send('POST', `/api/relay-keys/by-id/${key.json.relayKey.metadata.id}/rotate`, '')).status, 200, 'a POST action');
  t.equal((await send('DELETE', `/api/providers/by-id/${provider.json.metadata.id}`, '')).status, 204, 'a DELETE');
  t.equal((await send('DELETE', `/api/relay-keys/by-id/${key.json.relayKey.metadata.id}`, '  \n')).status, 204, 'whitespace is empty too');
});

t.test('a route that needs a body, and a body that is not JSON, are still 400s', async (t) => {
  const empty = await send('POST', '/api/providers', '');
  t.equal(empty.status, 400);
  t.equal(empty.json.error.code, 'RELAY_ERR_BAD_REQUEST');
  const broken = await send('POST', '/api/providers', '{');
  t.equal(broken.status, 400);
  const proto = await send('POST', '/api/providers', '{"__proto__":{"x":1},"metadata":{"displayName":"p"},"spec":{"adapter":"openai"}}');
  t.equal(proto.status, 400, 'a __proto__ key is refused as before');
});
