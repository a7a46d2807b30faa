// Inference endpoints on the wire (Fastify routes on Node's HTTP server): bodies in many pieces,
// the body limit on a chunked upload (no content-length to refuse up front), other methods and
// paths, app.inject agreeing, the relay key checked before the body, and one keep-alive connection
// serving many requests.
import t from 'tap';
import http from 'node:http';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

const BODY_LIMIT = 4096;
const relay = await startRelay({ config: { server: { host: '127.0.0.1', drainTimeoutMs: 5_000, bodyLimitBytes: BODY_LIMIT } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'lane-model' });
await routeLive(relay, seeded);
const CHAT = '/vendor-a/v1/chat/completions';
const auth = { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' };

interface RawAnswer { status: number; headers: http.IncomingHttpHeaders; text: string }

/** POSTs the body in the given pieces, with chunked transfer encoding (no content-length). */
function postInPieces(path: string, pieces: string[], headers: Record<string, string> = auth): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, relay.inferenceUrl);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      if (i === pieces.length) return req.end();
      req.write(pieces[i++]);
      setTimeout(next, 5);
    };
    next();
  });
}

t.test('a body that arrives in several pieces is read whole and forwarded as sent', async (t) => {
  const body = JSON.stringify({ model: 'lane-model', messages: [{ role: 'user', content: 'in pieces' }] });
  const pieces = [body.slice(0, 7), body.slice(7, 30), body.slice(30)];
  const got = await postInPieces(CHAT, pieces);
  t.equal(got.status, 200);
  t.match(JSON.parse(got.text), { object: 'chat.completion' });
  t.match(got.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  const seen = up.requests.at(-1)!;
  t.equal(seen.body.toString(), body, 'the upstream got the bytes as the client sent them');
});

t.test('a chunked body over the limit is refused with 413 once it passes the limit, and logged', async (t) => {
  const head = '{"model":"lane-model","messages":[{"role":"user","content":"';
  const pieces = [head, ...Array.from({ length: 8 }, () => 'x'.repeat(1024)), '"}]}'];
  const got = await postInPieces(CHAT, pieces);
  t.equal(got.status, 413);
  t.equal(JSON.parse(got.text).error.code, 'RELAY_ERR_BODY_TOO_LARGE');
  t.match(JSON.parse(got.text).error.message, new RegExp(`larger than the limit of ${BODY_LIMIT} bytes \\(server\\.bodyLimitBytes\\)`), 'the message names the limit and its setting');
  t.equal(got.headers.connection, 'close', 'the connection closes: the rest of the body is not read');
  const record = await usageRecord(relay, String(got.headers['x-request-id']));
  t.match(record, { status: 413, error_code: 'RELAY_ERR_BODY_TOO_LARGE', inbound_shape: 'openai.chat' });
});

t.test('other methods and unknown paths', async (t) => {
  const get = await fetch(`${relay.inferenceUrl}${CHAT}`, { headers: auth });
  t.equal(get.status, 405, 'GET on an inference endpoint');
  t.match(await get.json(), { error: { code: 'RELAY_ERR_METHOD_NOT_ALLOWED' } });
  const models = await fetch(`${relay.inferenceUrl}/vendor-a/v1/models`, { headers: auth });
  t.equal(models.status, 200, 'GET /v1/models is a Fastify route');
  const health = await fetch(`${relay.inferenceUrl}/healthz`);
  t.equal(health.status, 200);
  const trailing = await fetch(`${relay.inferenceUrl}${CHAT}/`, { method: 'POST', headers: auth, body: '{}' });
  t.equal(trailing.status, 404, 'a path that is not exactly an endpoint is not served by the lane');
});

t.test('the query string is kept, and does not change which endpoint serves', async (t) => {
  const got = await fetch(`${relay.inferenceUrl}${CHAT}?trace=1`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'lane-model', messages: [{ role: 'user', content: 'q' }] }) });
  t.equal(got.status, 200);
  t.match(up.requests.at(-1)!.path, /\?trace=1$/, 'forwarded to the upstream');
});

t.test('app.inject answers alike', async (t) => {
  const body = { model: 'lane-model', messages: [{ role: 'user', content: 'inject' }] };
  const injected = await relay.relay.inference.inject({ method: 'POST', url: CHAT, headers: auth, payload: JSON.stringify(body) });
  t.equal(injected.statusCode, 200);
  t.match(JSON.parse(injected.body), { object: 'chat.completion' });
  t.match(injected.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  const refused = await relay.relay.inference.inject({ method: 'POST', url: CHAT, headers: auth, payload: JSON.stringify({ messages: [] }) });
  t.equal(refused.statusCode, 400);
  t.match(JSON.parse(refused.body), { error: { code: 'RELAY_ERR_BAD_REQUEST', param: '/model' } });
});

t.test('a refused request is checked for its relay key first', async (t) => {
  const post = (headers: Record<string, string>, body: string) => fetch(`${relay.inferenceUrl}${CHAT}`, { method: 'POST', headers, body });
  const noKey = { 'content-type': 'application/json' };
  const wrongKey = { ...noKey, authorization: 'Bearer rk_not-a-key-of-this-relay' };
  for (const [what, headers, body] of [
    ['no key, body not JSON', noKey, '{'],
    ['wrong key, body not JSON', wrongKey, '{'],
    ['wrong key, no model', wrongKey, '{"messages":[]}'],
    ['wrong key, wrong content type', { ...wrongKey, 'content-type': 'text/plain' }, '{}'],
  ] as const) {
    const res = await post(headers, body);
    t.equal(res.status, 401, `${what}: 401, not the body's error`);
    t.equal(((await res.json()) as { error: { code: string } }).error.code, 'RELAY_ERR_RELAY_KEY_INVALID');
  }
  // With a valid key the body's error stands, and the record names the key and its policy.
  const bad = await post(auth, '{');
  t.equal(bad.status, 400);
  const record = await usageRecord(relay, bad.headers.get('x-request-id')!);
  t.match(record, { status: 400, error_code: 'RELAY_ERR_INVALID_JSON', relay_key_id: seeded.relayKeyId, policy_id: seeded.policyId });
});

t.test('one keep-alive connection: POSTs and a GET, every request recorded', async (t) => {
  const body = JSON.stringify({ model: 'lane-model', messages: [{ role: 'user', content: 'one connection' }] });
  const url = new URL(relay.inferenceUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const sockets = new Set<unknown>();
  const ask = (method: 'GET' | 'POST', path: string) => new Promise<RawAnswer>((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent, headers: method === 'POST' ? { ...auth, 'content-length': String(Buffer.byteLength(body)) } : auth }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on('socket', (socket) => sockets.add(socket));
    req.on('error', reject);
    req.end(method === 'POST' ? body : undefined);
  });
  const answers = [await ask('POST', CHAT), await ask('POST', CHAT), await ask('GET', '/vendor-a/v1/models'), await ask('POST', CHAT)];
  t.same(answers.map((a) => a.status), [200, 200, 200, 200]);
  t.equal(sockets.size, 1, 'all four on one connection');
  for (const answer of [answers[0]!, answers[1]!, answers[3]!]) {
    t.match(JSON.parse(answer.text), { object: 'chat.completion' });
    const record = await usageRecord(relay, String(answer.headers['x-request-id']));
    t.match(record, { status: 200, inbound_shape: 'openai.chat', relay_key_id: seeded.relayKeyId });
  }
  t.equal(answers[0]!.headers['content-length'], String(Buffer.byteLength(answers[0]!.text)), 'the upstream\'s length passes');
  t.equal(answers[0]!.headers.connection, 'keep-alive');
});


t.test('a GET on a POST endpoint is a 405 with allow; a path served under a prefix is named in the 404', async (t) => {
  const get = await fetch(`${relay.inferenceUrl}${CHAT}`, { headers: auth });
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
  t.match(await get.json(), { error: { message: /GET is not served at \/vendor-a\/v1\/chat\/completions; use POST/ } });
  const guessed = await fetch(`${relay.inferenceUrl}/v1/chat/completions`, { method: 'POST', headers: auth, body: '{}' });
  t.equal(guessed.status, 404);
  t.match(await guessed.json(), { error: { message: /did you mean \/vendor-a\/v1\/chat\/completions\?/ } });
});

t.test('the paths new clients guess: a base URL with or without /v1 is named in the 404 (issue 39 #7)', async (t) => {
  const cases: Array<[string, string]> = [
    ['/v1/messages', '/vendor-b/v1/messages'],
    ['/vendor-a/chat/completions', '/vendor-a/v1/chat/completions'],
    ['/vendor-b/messages', '/vendor-b/v1/messages'],
    ['/vendor-b/v1/v1/messages', '/vendor-b/v1/messages'],
    ['/vendor-a/v1/v1/responses', '/vendor-a/v1/responses'],
  ];
  for (const [path, meant] of cases) {
    const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: auth, body: '{}' });
    t.equal(res.status, 404, path);
    const body = await res.json() as { error: { message: string } };
    t.equal(body.error.message, `no route for POST ${path}; did you mean ${meant}?`, path);
  }
  const nowhere = await fetch(`${relay.inferenceUrl}/vendor-b/v2/nothing`, { method: 'POST', headers: auth, body: '{}' });
  t.match(await nowhere.json(), { error: { message: 'no route for POST /vendor-b/v2/nothing' } }, 'no hint when nothing is near');
  // A path is at most the header limit long; the message repeats its first 200 characters.
  const long = `/${'p'.repeat(8_000)}`;
  const far = await fetch(`${relay.inferenceUrl}${long}`, { method: 'POST', headers: auth, body: '{}' });
  t.equal(far.status, 404);
  t.equal(((await far.json()) as { error: { message: string } }).error.message, `no route for POST ${long.slice(0, 200)}… (8001 characters)`);
});

t.test("a 401 on /vendor-b names x-api-key, in Anthropic's error shape; /vendor-a's names the bearer token", async (t) => {
  for (const [method, path] of [['POST', '/vendor-b/v1/messages'], ['GET', '/vendor-b/v1/models'], ['POST', '/vendor-b/v1/messages/count_tokens']]) {
    const res = await fetch(`${relay.inferenceUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    t.equal(res.status, 401, path);
    t.same(await res.json(), {
      type: 'error',
      error: { type: 'authentication_error', message: 'Missing relay key: send it as x-api-key: <relay key> (the header Anthropic SDKs and Claude Code send their API key in), or Authorization: Bearer <relay key>.' },
    }, path);
  }
  const openai = await fetch(`${relay.inferenceUrl}${CHAT}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(openai.status, 401);
  t.match(await openai.json(), { error: { message: 'Missing relay key: send it as Authorization: Bearer <relay key>.', type: 'authentication_error' } });
});
