// Strings Postgres cannot store (a NUL character, an unpaired UTF-16 surrogate) anywhere in a
// control-plane request: JSON bodies, path parameters and query strings answer 400
// RELAY_ERR_BAD_REQUEST naming where the character is, never a 500 from the database. One
// whole Relay (Postgres by default, RELAY_TEST_DB=pglite for PGlite).
import t, { type Test } from 'tap';
import { assertStorableStrings } from '../../core/control/validator.ts';
import { echoedName } from '../../core/echoed-name.ts';
import { startRelay } from '../../core/testing.ts';

const relay = await startRelay({ env: { RELAY_ADMIN_USERNAME: 'admin', RELAY_ADMIN_PASSWORD: 'correct horse battery' } });
t.teardown(() => relay.close());
const { api } = relay;

/** A raw JSON body, so that escapes such as \ud800 reach the server exactly as written. */
async function send(method: string, path: string, rawJson: string, options: { anonymous?: boolean } = {}) {
  const res = await fetch(relay.controlUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(options.anonymous ? {} : { authorization: `Bearer ${relay.adminToken}` }) },
    body: rawJson,
  });
  return { status: res.status, body: await res.json() as { error?: { code: string; field?: string; message: string } } & Record<string, any> };
}

function expectBadString(t: Test, res: { status: number; body: any }, field: string, what: RegExp) {
  t.equal(res.status, 400, `400 for ${field}`);
  t.equal(res.body.error?.code, 'RELAY_ERR_BAD_REQUEST');
  t.equal(res.body.error?.field, field, 'names where the character is');
  t.match(res.body.error?.message, what);
  t.notMatch(res.body.error?.message, /[\u0000\ud800-\udfff]/, 'the message does not repeat the bad character');
}

const provider = await api('POST', '/api/providers', { metadata: { displayName: 'OpenAI' }, spec: { adapter: 'openai' } });
t.equal(provider.status, 201);

t.test('JSON bodies: the JSON pointer of the string', async (t) => {
  expectBadString(t, await send('POST', '/api/providers', '{"metadata":{"displayName":"nul\\u0000name"},"spec":{"adapter":"openai"}}'),
    '/metadata/displayName', /NUL character/);
  expectBadString(t, await send('POST', '/api/providers', '{"metadata":{"displayName":"x"},"spec":{"adapter":"open\\u0000ai"}}'),
    '/spec/adapter', /NUL character/);
  expectBadString(t, await send('POST', '/api/providers', '{"metadata":{"displayName":"x"},"spec":{"adapter":"a\\ud800b"}}'),
    '/spec/adapter', /unpaired UTF-16 surrogate \(U\+D800\)/);
  expectBadString(t, await send('POST', '/api/providers', '{"metadata":{"displayName":"x\\udc00"},"spec":{"adapter":"openai"}}'),
    '/metadata/displayName', /unpaired UTF-16 surrogate \(U\+DC00\)/);
  // Inside arrays and as an object key (hosts' headers are a free-form map).
  expectBadString(t, await send('POST', '/api/providers', '{"metadata":{"displayName":"x"},"spec":{"adapter":"openai","shapes":["ok","b\\u0000"]}}'),
    '/spec/shapes/1', /NUL character/);
  expectBadString(t, await send('POST', '/api/hosts',
    `{"metadata":{"displayName":"h"},"spec":{"providerId":"${provider.body.metadata.id}","baseUrl":"https://x.test/v1","headers":{"x-a\\u0000b":"v"}}}`),
    '/spec/headers/x-a\\u0000b', /NUL character \(U\+0000\) in a field name/);
  const updated = await send('PUT', `/api/providers/by-id/${provider.body.metadata.id}`, '{"metadata":{"displayName":"\\ud83d"}}');
  expectBadString(t, updated, '/metadata/displayName', /unpaired/);
  t.equal((await api('GET', `/api/providers/${provider.body.metadata.id}`)).body.metadata.displayName, 'OpenAI', 'nothing was stored');
});

t.test('well-formed text passes, surrogate pairs included', async (t) => {
  const res = await send('POST', '/api/providers', '{"metadata":{"displayName":"Rocket \\ud83d\\ude80 ünïcode"},"spec":{"adapter":"openai"}}');
  t.equal(res.status, 201);
  t.equal(res.body.metadata.displayName, 'Rocket 🚀 ünïcode');
});

t.test('path parameters and query strings', async (t) => {
  expectBadString(t, await api('GET', '/api/relay-keys/%00'), 'path:/ref', /NUL character/);
  expectBadString(t, await api('GET', '/api/providers?q=%00'), 'query:/q', /NUL character/);
  expectBadString(t, await api('GET', '/api/providers?q=ok&q=x%00'), 'query:/q/1', /NUL character/);
  // The logs routes sit outside the catalog's validator: the check covers them too.
  expectBadString(t, await api('GET', '/api/logs?modelId=%00'), 'query:/modelId', /NUL character/);
  expectBadString(t, await api('GET', '/api/logs/abc%00'), 'path:/requestId', /NUL character/);
});

t.test('sign-in: a 400, before any lookup', async (t) => {
  const res = await send('POST', '/api/auth/login', '{"username":"adm\\u0000in","password":"x"}', { anonymous: true });
  expectBadString(t, res, '/username', /NUL character/);
  const ok = await send('POST', '/api/auth/login', '{"username":"admin","password":"correct horse battery"}', { anonymous: true });
  t.equal(ok.status, 200, 'a good sign-in still works');
});

t.test('credentials are checked first: no 400 tells an anonymous caller about a route', async (t) => {
  const res = await fetch(`${relay.controlUrl}/api/providers?q=%00`);
  t.equal(res.status, 401);
});

t.test('the walk itself: deep nesting, pointer escaping, plain values', async (t) => {
  let deep: unknown = 'bad\u0000';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  // The 200,000-character pointer is echoed as callers' names are: its start and its length.
  t.throws(() => assertStorableStrings(deep, ''), { code: 'RELAY_ERR_BAD_REQUEST', field: echoedName(`/${Array(100_000).fill('0').join('/')}`) },
    '100,000 levels deep: found, and no stack overflow');
  t.throws(() => assertStorableStrings({ 'a/b~c': { 'd\ud800': 1 } }, ''), { code: 'RELAY_ERR_BAD_REQUEST', field: '/a~1b~0c/d\\ud800' }, 'segments escaped as JSON pointer, bad characters as \\uXXXX');
  t.throws(() => assertStorableStrings('x\u0000', 'query:'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'query:/' });
  t.doesNotThrow(() => assertStorableStrings({ n: 1, b: true, z: null, s: ['ok', '\ud83d\ude80', { k: 'é' }] }, ''));
  t.throws(() => assertStorableStrings(['\ude80\ud83d'], ''), { message: /U\+DE80/ }, 'a pair in the wrong order is two unpaired surrogates');
});
