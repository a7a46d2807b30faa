// Strings Postgres cannot store (a NUL character, an unpaired UTF-16 surrogate) anywhere in a
// control-plane request: JSON bodies, path parameters and query strings answer 400
// RELAY_ERR_BAD_REQUEST naming where the character is, never a 500 from the database; so do
// bodies nested deeper than any route takes. One whole Relay (Postgres by default,
// RELAY_TEST_DB=pglite for PGlite).
import t, { type Test } from 'tap';
import { MAX_CONTROL_NESTING, assertStorableInput } from '../../core/control/validator.ts';
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

t.test('a body nested deeper than any route takes is a 400 where it passes the bound, never a 500', async (t) => {
  const provider = await api('POST', '/api/providers', { metadata: { displayName: 'nesting' }, spec: { adapter: 'openai' } });
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  // A host's options are a free-form record: TypeBox's clone of them overflowed the stack (a 500) before.
  const host = await send('POST', '/api/hosts', `{"metadata":{"displayName":"nesting"},"spec":{"providerId":"${provider.body.metadata.id}","baseUrl":"http://127.0.0.1:9/v1","options":{"a":${deep}}}}`);
  t.equal(host.status, 400);
  t.match(host.body.error, { code: 'RELAY_ERR_BAD_REQUEST', field: /^\/spec\/options\/a\/0\/0\//, message: `nests arrays and objects deeper than ${MAX_CONTROL_NESTING} levels` });
  const apply = await send('POST', '/api/catalog/apply', `{"document":{"version":1,"providers":[{"slug":"deep","spec":{"adapter":"openai","x":${deep}}}]}}`);
  t.equal(apply.status, 400, 'a catalog file too');
  t.equal((await api('GET', '/api/hosts')).body.items.length, 0, 'nothing was written');
});

t.test('credentials are checked first: no 400 tells an anonymous caller about a route', async (t) => {
  const res = await fetch(`${relay.controlUrl}/api/providers?q=%00`);
  t.equal(res.status, 401);
});

t.test('the walk itself: deep nesting, pointer escaping, plain values', async (t) => {
  const nested = (levels: number, inside: unknown): unknown => {
    let value = inside;
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };
  t.throws(() => assertStorableInput(nested(100_000, 'ok'), ''), { code: 'RELAY_ERR_BAD_REQUEST', message: `/${Array(MAX_CONTROL_NESTING).fill('0').join('/')}: nests arrays and objects deeper than ${MAX_CONTROL_NESTING} levels` },
    '100,000 levels deep: refused where it passes the bound, and no stack overflow');
  t.doesNotThrow(() => assertStorableInput(nested(MAX_CONTROL_NESTING, 'ok'), ''), 'as deep as the bound: accepted');
  t.throws(() => assertStorableInput(nested(MAX_CONTROL_NESTING, 'bad\u0000'), ''), { code: 'RELAY_ERR_BAD_REQUEST', field: `/${Array(MAX_CONTROL_NESTING).fill('0').join('/')}` },
    'a bad string at the bound\'s depth: found');
  t.throws(() => assertStorableInput({ 'a/b~c': { 'd\ud800': 1 } }, ''), { code: 'RELAY_ERR_BAD_REQUEST', field: '/a~1b~0c/d\\ud800' }, 'segments escaped as JSON pointer, bad characters as \\uXXXX');
  t.throws(() => assertStorableInput('x\u0000', 'query:'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'query:/' });
  t.doesNotThrow(() => assertStorableInput({ n: 1, b: true, z: null, s: ['ok', '\ud83d\ude80', { k: 'é' }] }, ''));
  t.throws(() => assertStorableInput(['\ude80\ud83d'], ''), { message: /U\+DE80/ }, 'a pair in the wrong order is two unpaired surrogates');
});
