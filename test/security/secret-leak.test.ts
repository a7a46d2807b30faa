// No secret leaks: realistic traffic with known secrets (relay keys, stored and env host keys, the
// master key, the admin token, a dashboard password and session, proxy-mode client credentials,
// wrong keys a caller sent) through a whole Relay with payload logging on, at debug log level.
// Then every log line, every API answer (body and headers), the request log and captured payloads,
// every file in the data directory, /metrics, and every database row are searched for each
// secret in plain, base64, base64url, percent-encoded, hex and JSON-escaped form: none is found,
// except where a secret is meant to be shown (a relay key's plaintext in its create or rotate
// answer, the session cookie in the sign-in answer). Upstreams never receive Relay's own secrets.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { recordCounters } from './counters.ts';
import { SecretSearch, type Secret } from './secret-search.ts';

const rand = (prefix: string) => `${prefix}${randomBytes(18).toString('base64url')}`;
const HK_STORED = [rand('sk-stored-one-'), rand('sk-stored-two-')];
const HK_ANTHROPIC = rand('sk-ant-stored-');
const HK_ENV = rand('sk-env-');
const HK_UPDATED = rand('sk-updated-');
const PROXY_CLIENT_KEY = rand('sk-ant-client-');
const PROXY_CLIENT_BEARER = rand('sk-ant-oat-client-');
const WRONG_RELAY_KEY = rand('rk_');
const WRONG_ADMIN_TOKEN = rand('adm_');
const PASSWORD = rand('pw-');
const WRONG_PASSWORD = rand('pw-wrong-');

const logs: string[] = [];
const relay = await startRelay({
  plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }, { use: 'payload-file' }],
  env: { LEAK_TEST_UPSTREAM_KEY: HK_ENV, RELAY_ADMIN_USERNAME: 'ada', RELAY_ADMIN_PASSWORD: PASSWORD },
  logLevel: 'debug',
  logStream: { write: (line: string) => { logs.push(line); } },
});
const openaiUp = await startFakeUpstream({ apiKey: [...HK_STORED, HK_ENV, HK_UPDATED] });
const anthropicUp = await startFakeUpstream({ apiKey: [HK_ANTHROPIC, PROXY_CLIENT_KEY] });
const sql = new pg.Client({ connectionString: relay.databaseUrl! });
await sql.connect();
t.teardown(async () => {
  await sql.end();
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

interface Seen { where: string; text: string; allowed: string[] }
const answers: Seen[] = [];

/** Calls a listener and keeps the answer (status line, headers, body) for the search. */
async function call(base: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown; allowed?: string[] } = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const headers = [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
  answers.push({ where: `${method} ${path} (${res.status})`, text: `${headers}\n\n${text}`, allowed: options.allowed ?? [] });
  let json: any = null;
  try { json = JSON.parse(text); } catch { /* SSE or text */ }
  return { status: res.status, json, headers: res.headers };
}
const admin = (method: string, path: string, body?: unknown, allowed?: string[]) =>
  call(relay.controlUrl, method, path, { headers: { authorization: `Bearer ${relay.adminToken}` }, body, allowed });

// Catalog: OpenAI-shaped host with two stored keys (payload logging on for its policy), an
// Anthropic-shaped host with a stored key, and a host whose key comes from the environment.
const main = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'leak-openai', hostKeys: HK_STORED, policy: { modelIds: '*', payloadLoggingEnabled: true } });
const second = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'leak-anthropic', hostKeys: [HK_ANTHROPIC], policy: { modelIds: '*' } });
const envRoute = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'leak-env', hostKeys: [], policy: { modelIds: '*' } });
const envKey = await admin('POST', '/api/host-keys', { metadata: { displayName: 'env key' }, spec: { hostId: envRoute.hostId, valueFrom: { kind: 'env', env: 'LEAK_TEST_UPSTREAM_KEY' } } });
await admin('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 1024 * 1024 });
await settled(relay, (snap) => snap.relayKeys.has(envRoute.relayKeyId) && snap.hostKeysOfHost(envRoute.hostId).length === 1);

const relayKeys = [main.relayKey, second.relayKey, envRoute.relayKey];
const bearer = { authorization: `Bearer ${main.relayKey}` };
const infer = (path: string, body: object | string, headers: Record<string, string> = bearer) => call(relay.inferenceUrl, 'POST', path, { headers, body });
const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hello' }] });
const messages = (model: string, stream = false) => ({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] });
const responses = (model: string, stream = false) => ({ model, stream, input: 'hello' });

t.test('inference traffic in every shape', async (t) => {
  const ok = async (p: Promise<{ status: number }>, what: string) => t.equal((await p).status, 200, what);
  for (const stream of [false, true]) {
    for (const model of ['leak-openai', 'leak-anthropic', 'leak-env']) {
      await ok(infer('/vendor-a/v1/chat/completions', chat(model, stream)), `chat ${model} stream=${stream}`);
      await ok(infer('/vendor-a/v1/responses', responses(model, stream)), `responses ${model} stream=${stream}`);
      await ok(infer('/vendor-b/v1/messages', messages(model, stream)), `messages ${model} stream=${stream}`);
      await ok(infer('/v1/generate', { model, stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] }), `generate ${model} stream=${stream}`);
      await ok(infer('/agent-a/v1/responses', responses(model, stream), { ...bearer, 'session-id': 'sess-1', originator: 'codex_exec' }), `agent-a ${model} stream=${stream}`);
    }
  }
  await ok(infer('/vendor-a/v1/embeddings', { model: 'leak-openai', input: 'hello' }), 'embeddings');
  await ok(infer('/vendor-b/v1/messages', messages('leak-anthropic'), { 'x-api-key': main.relayKey }), 'relay key as x-api-key');
  for (const path of ['/v1/models', '/vendor-a/v1/models', '/agent-a/v1/models']) {
    t.equal((await call(relay.inferenceUrl, 'GET', path, { headers: bearer })).status, 200, path);
  }
  t.equal((await call(relay.inferenceUrl, 'GET', '/healthz')).status, 200, '/healthz');
  t.equal((await call(relay.inferenceUrl, 'GET', '/openapi.json')).status, 200, '/openapi.json');
});

t.test('proxy mode: the client credential goes upstream and nowhere else', async (t) => {
  anthropicUp.reset();
  const proxied = { 'x-gw-api-key': second.relayKey, 'x-gw-proxy-mode': '1', 'anthropic-version': '2023-06-01' };
  t.equal((await infer('/vendor-b/v1/messages', messages('leak-anthropic'), { ...proxied, 'x-api-key': PROXY_CLIENT_KEY })).status, 200, 'x-api-key');
  t.equal((await infer('/vendor-b/v1/messages', messages('leak-anthropic', true), { ...proxied, 'x-api-key': PROXY_CLIENT_KEY })).status, 200, 'streamed');
  t.equal(anthropicUp.requests[0]?.headers['x-api-key'], PROXY_CLIENT_KEY, 'the upstream got the client credential');
  anthropicUp.enqueue(faults.unauthorized({ vendor: 'anthropic' }));
  t.equal((await infer('/vendor-b/v1/messages', messages('leak-anthropic'), { ...proxied, authorization: `Bearer ${PROXY_CLIENT_BEARER}` })).status, 401, 'a credential the upstream refuses: its 401');
});

t.test('errors: wrong keys, bad models, upstream 401 and 429', async (t) => {
  for (const path of ['/vendor-a/v1/chat/completions', '/vendor-b/v1/messages', '/v1/generate']) {
    t.equal((await infer(path, chat('leak-openai'), { authorization: `Bearer ${WRONG_RELAY_KEY}` })).status, 401, `${path}: wrong relay key`);
    t.equal((await infer(path, chat('leak-openai'), { 'x-api-key': WRONG_RELAY_KEY })).status, 401, `${path}: wrong x-api-key`);
    t.equal((await infer(path, { ...chat('no-such-model') })).status, 404, `${path}: unknown model`);
  }
  t.equal((await infer('/vendor-b/v1/messages', messages('leak-anthropic'), { 'x-gw-api-key': WRONG_RELAY_KEY, 'x-gw-proxy-mode': '1', 'x-api-key': PROXY_CLIENT_KEY })).status, 401, 'proxy mode with a wrong relay key');
  t.equal((await infer('/vendor-a/v1/chat/completions', '{"model": "leak-openai", "messages": [')).status, 400, 'bad JSON');
  openaiUp.enqueue(faults.unauthorized({ vendor: 'openai' }), { times: 2 });
  t.equal((await infer('/vendor-a/v1/chat/completions', chat('leak-openai'))).status, 502, 'upstream 401 on every key: the gateway\'s problem, a 502');
  openaiUp.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 1 }));
  const limited = await infer('/vendor-a/v1/chat/completions', chat('leak-env'));
  t.equal(limited.status, 429, 'upstream 429');
  anthropicUp.enqueue(faults.rateLimit({ vendor: 'anthropic' }));
  t.equal((await infer('/vendor-a/v1/chat/completions', chat('leak-anthropic'))).status, 429, 'translated upstream 429');
});

const rotated: string[] = [];
t.test('admin API: every kind, rotation, settings, logs, usage, metrics', async (t) => {
  for (const kind of ['providers', 'hosts', 'models', 'host-keys', 'rate-limits', 'policies', 'pricings', 'relay-keys']) {
    const list = await admin('GET', `/api/${kind}?limit=500`);
    t.equal(list.status, 200, `list ${kind}`);
    for (const item of list.json.items) t.equal((await admin('GET', `/api/${kind}/${item.metadata.id}`)).status, 200, `get ${kind}`);
  }
  const rl = await admin('POST', '/api/rate-limits', { metadata: { displayName: 'leak rl' }, spec: { requestsPerMinute: 10_000 } });
  t.equal(rl.status, 201, 'create rate limit');
  t.equal((await admin('POST', '/api/pricings', { metadata: { displayName: 'leak price' }, spec: { modelId: main.modelId, currency: 'USD', inputPerMillion: 1, outputPerMillion: 2 } })).status, 201, 'create pricing');
  t.equal((await admin('PUT', `/api/policies/by-id/${main.policyId}`, { spec: { rateLimitIds: [rl.json.metadata.id] } })).status, 200, 'update policy');
  t.equal((await admin('PUT', `/api/hosts/by-id/${main.hostId}`, { spec: { timeoutMs: 6_000 } })).status, 200, 'update host');
  t.equal((await admin('PUT', `/api/host-keys/by-id/${main.hostKeyIds[1]}`, { spec: { value: HK_UPDATED } })).status, 200, 'new stored value');
  t.equal((await admin('PUT', `/api/host-keys/by-id/${envKey.json.metadata.id}`, { spec: { weight: 5 } })).status, 200, 'update env key');
  t.equal((await admin('PUT', `/api/relay-keys/by-id/${second.relayKeyId}`, { spec: { payloadLoggingEnabled: true } })).status, 200, 'update relay key');
  const created = await admin('POST', '/api/relay-keys', { metadata: { displayName: 'extra' }, spec: { policyId: main.policyId } }, ['created relay key']);
  rotated.push(created.json.plaintext);
  const rotate = await admin('POST', `/api/relay-keys/by-id/${created.json.relayKey.metadata.id}/rotate`, undefined, ['rotated relay key']);
  t.equal(rotate.status, 200, 'rotate');
  rotated.push(rotate.json.plaintext);
  for (const [method, path, body] of [
    ['GET', '/api/settings/usage-logging'], ['PUT', '/api/settings/usage-logging', { backend: 'file' }], ['GET', '/api/settings/payload-logging'],
    ['GET', '/api/auth/whoami'], ['GET', '/api/version'], ['GET', '/api/openapi.json'], ['GET', '/api/host-keys/health'], ['POST', '/api/reload'],
    ['POST', '/api/master-key/generate'], ['GET', '/api/usage/events?limit=500'], ['GET', '/api/usage/summary?since=24h'], ['GET', '/api/usage/timeseries?since=1h'],
    ['GET', '/metrics'], ['GET', '/config.json'],
  ] as Array<[string, string, unknown?]>) {
    const res = await admin(method, path, body);
    t.ok(res.status < 300, `${method} ${path}: ${res.status}`);
  }
  t.equal((await call(relay.controlUrl, 'GET', '/api/providers', { headers: { authorization: `Bearer ${WRONG_ADMIN_TOKEN}` } })).status, 401, 'a wrong admin token');
});

let sessionToken = '';
t.test('dashboard sign-in, cookie calls, sign-out', async (t) => {
  const wrong = await call(relay.controlUrl, 'POST', '/api/auth/login', { body: { username: 'ada', password: WRONG_PASSWORD } });
  t.equal(wrong.status, 401, 'a wrong password');
  const login = await call(relay.controlUrl, 'POST', '/api/auth/login', { body: { username: 'ada', password: PASSWORD }, allowed: ['session token'] });
  t.equal(login.status, 200, 'signed in');
  sessionToken = /relay_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1] ?? '';
  t.ok(sessionToken.length > 20, 'got a session cookie');
  const cookie = { cookie: `relay_session=${sessionToken}` };
  t.equal((await call(relay.controlUrl, 'GET', '/api/auth/whoami', { headers: cookie })).status, 200, 'whoami by cookie');
  t.equal((await call(relay.controlUrl, 'GET', '/api/host-keys', { headers: cookie })).status, 200, 'list by cookie');
  t.equal((await call(relay.controlUrl, 'POST', '/api/reload', { headers: cookie })).status, 403, 'a change without the CSRF header');
  t.equal((await call(relay.controlUrl, 'POST', '/api/auth/logout', { headers: { ...cookie, 'x-relay-csrf': '1' } })).status, 204, 'signed out');
  t.equal((await call(relay.controlUrl, 'GET', '/api/auth/whoami', { headers: cookie })).status, 401, 'the ended session is refused');
});

t.test('no secret anywhere', async (t) => {
  const secrets: Secret[] = [
    ...relayKeys.map((value, i) => ({ name: `relay key ${i}`, value })),
    { name: 'created relay key', value: rotated[0] }, { name: 'rotated relay key', value: rotated[1] },
    ...HK_STORED.map((value, i) => ({ name: `stored host key ${i}`, value })),
    { name: 'stored Anthropic host key', value: HK_ANTHROPIC }, { name: 'env host key', value: HK_ENV }, { name: 'updated host key', value: HK_UPDATED },
    { name: 'master key', value: relay.masterKey! }, { name: 'admin token', value: relay.adminToken },
    { name: 'dashboard password', value: PASSWORD }, { name: 'wrong password', value: WRONG_PASSWORD }, { name: 'session token', value: sessionToken },
    { name: 'proxy client x-api-key', value: PROXY_CLIENT_KEY }, { name: 'proxy client bearer', value: PROXY_CLIENT_BEARER },
    { name: 'wrong relay key', value: WRONG_RELAY_KEY }, { name: 'wrong admin token', value: WRONG_ADMIN_TOKEN },
  ];
  const search = new SecretSearch(secrets);

  // The request log and captured payloads, once the observer has written every event.
  let logList: any[] = [];
  // Every request to the inference API is logged: those the listener refused before the pipeline
  // and the model lists included (answers also holds control-plane calls, under /api).
  const inferenceCalls = answers.filter((a) => /^[A-Z]+ \/(vendor|v1|agent)/.test(a.where)).length;
  await eventually(async () => {
    const res = await admin('GET', '/api/logs?limit=500');
    logList = res.json?.items ?? [];
    return logList.length >= inferenceCalls;
  }, 10_000, 100).catch(() => undefined);
  t.equal(logList.length, inferenceCalls, 'every request to the inference API is in the request log');
  // Payloads are written in their own batches, after the usage events that name them.
  let withPayload = 0;
  await eventually(async () => {
    withPayload = 0;
    for (const item of logList) {
      const detail = await admin('GET', `/api/logs/${item.request_id}`);
      if (detail.json?.request_body !== undefined) withPayload++;
    }
    return withPayload >= 20;
  }, 10_000, 100).catch(() => undefined);
  t.ok(withPayload >= 20, `${withPayload} of ${logList.length} records carry captured payloads`);
  await eventually(() => logs.some((l) => l.includes('"level":20')), 1_000).catch(() => undefined);

  for (const [i, line] of logs.entries()) search.search(`log line ${i}`, line);
  for (const a of answers) search.search(`answer to ${a.where}`, a.text, a.allowed);
  const files = search.searchDirectory(relay.dataDir);
  const tables = await sql.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
  let rows = 0;
  for (const { table_name } of tables.rows) {
    const res = await sql.query<{ row: string }>(`SELECT row_to_json(x)::text AS row FROM "${table_name}" x`);
    for (const r of res.rows) { rows++; search.search(`database ${table_name}`, r.row); }
  }
  const relaySecrets = new SecretSearch(secrets.filter((s) => /relay key|master|admin|password|session/.test(s.name)));
  for (const up of [openaiUp, anthropicUp]) {
    for (const r of up.requests) relaySecrets.search(`upstream request ${r.path}`, `${JSON.stringify(r.headers)}\n${r.body.toString('latin1')}`);
  }

  // Positive control: the search does find host keys where they belong, in what upstreams received.
  const control = new SecretSearch(secrets.filter((s) => /host key|proxy client x-api-key/.test(s.name)));
  for (const up of [openaiUp, anthropicUp]) for (const r of up.requests) control.search('upstream', JSON.stringify(r.headers));
  t.ok(new Set(control.leaks.map((l) => l.secret)).size >= 4, 'the search finds host keys and the proxy credential in upstream requests');
  t.ok(logs.length > 0, `${logs.length} log lines searched`);
  t.ok(answers.length > 100, `${answers.length} answers searched`);
  t.ok(files >= 2, `${files} files in the data directory searched`);
  t.ok(rows > 10, `${rows} database rows in ${tables.rows.length} tables searched`);
  t.same(search.leaks.slice(0, 20), [], `no secret in ${search.places} places`);
  t.same(relaySecrets.leaks.slice(0, 20), [], `no Relay secret in ${relaySecrets.places} upstream requests`);
  // Upstream faults this test scripted: a proxy-mode 401, two 401s (both keys), two 429s.
  recordCounters('secret-leak', { faultsInjected: 5, eventsExpected: inferenceCalls, eventsLost: Math.max(0, inferenceCalls - logList.length), secretsChecked: secrets.length, placesSearched: search.places + relaySecrets.places, logLines: logs.length, answers: answers.length, dataFiles: files, databaseRows: rows, leaks: search.leaks.length + relaySecrets.leaks.length });
});
