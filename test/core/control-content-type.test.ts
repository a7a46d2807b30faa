// The control API reads JSON bodies and nothing else: a body in another content-type, text/plain
// included, is a 415 naming the type sent and application/json, and never reaches a route (before,
// a text/plain body reached routes as a string: a 400 "expected object", or accepted where a
// route reads no body). An empty body is no body whatever its content-type, so DELETE and the
// POST actions work as the dashboard and the CLI send them, and as shell helpers do.
import t from 'tap';
import { createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});

// Bytes, not a string: fetch would add content-type text/plain to a string body.
const send = async (method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${relay.url}${path}`, { method, body: body === undefined ? undefined : Buffer.from(body), headers: { authorization: `Bearer ${relay.adminToken}`, ...headers } });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
};
const providerBody = (name: string) => JSON.stringify({ metadata: { displayName: name }, spec: { adapter: 'openai' } });
const providerCount = async () => (await send('GET', '/api/providers')).json.items.length as number;

t.test('a body that is not application/json is a 415 naming the type, and changes nothing', async (t) => {
  const before = await providerCount();
  for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'application/merge-patch+json']) {
    const got = await send('POST', '/api/providers', providerBody(`as ${type}`), { 'content-type': type });
    t.equal(got.status, 415, `${type}: 415`);
    t.equal(got.json.error.code, 'RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
    t.match(got.json.error.message, `content-type "${type.split(';')[0]}" is not accepted: the control API takes application/json`, `${type}: names the type sent and the one taken`);
  }
  const bare = await send('POST', '/api/providers', providerBody('no type'));
  t.equal(bare.status, 415, 'a body without a content-type: 415');
  t.match(bare.json.error.message, 'a body without a content-type is not accepted: the control API takes application/json');
  t.equal(await providerCount(), before, 'no provider was created');
});

t.test('a text/plain body reaches no route: not one that reads no body, nor sign-in', async (t) => {
  const reload = await send('POST', '/api/reload', 'anything', { 'content-type': 'text/plain' });
  t.equal(reload.status, 415, 'POST /api/reload with a text/plain body');
  const login = await fetch(`${relay.url}/api/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'a', password: 'b' }), headers: { 'content-type': 'text/plain' } });
  t.equal(login.status, 415, 'sign-in with a text/plain body (what a cross-site form can send)');
});

t.test('an empty body is no body, whatever its content-type', async (t) => {
  const created = await send('POST', '/api/providers', providerBody('to delete'), { 'content-type': 'application/json; charset=utf-8' });
  t.equal(created.status, 201, 'application/json with a charset');
  t.equal((await send('DELETE', `/api/providers/by-id/${created.json.metadata.id}`, '', { 'content-type': 'text/plain' })).status, 204, 'a DELETE with an empty text/plain body');
  const policy = await send('POST', '/api/policies', JSON.stringify({ metadata: { displayName: 'pol' }, spec: { modelIds: '*' } }), { 'content-type': 'application/json' });
  const key = await send('POST', '/api/relay-keys', JSON.stringify({ metadata: { displayName: 'k' }, spec: { policyId: policy.json.metadata.id } }), { 'content-type': 'application/json' });
  t.equal((await send('POST', `/api/relay-keys/by-id/${key.json.relayKey.metadata.id}/rotate`)).status, 200, 'a POST action with no body and no content-type');
  t.equal((await send('POST', '/api/reload', '', { 'content-type': 'application/x-www-form-urlencoded' })).status, 200, 'a POST action with an empty form body');
  t.equal((await send('DELETE', `/api/relay-keys/by-id/${key.json.relayKey.metadata.id}`)).status, 204, 'a DELETE with no body at all');
});
