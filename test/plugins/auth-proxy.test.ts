// auth-proxy: X-GW-API-Key authentication, the X-GW-Proxy-Mode values, the operator's options
// (enabled, prefixes), X-GW-Host, and that a client's credential serves only its own request.
import t from 'tap';
import { startRelay, seedRoute, eventually, DEFAULT_TEST_PLUGINS, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const up = await startFakeUpstream();
const second = await startFakeUpstream();
t.teardown(async () => {
  await up.close();
  await second.close();
});

async function boot(options?: Record<string, unknown>): Promise<TestRelay> {
  const relay = await startRelay({ plugins: [{ use: 'auth-proxy', ...(options ? { options } : {}) }, ...DEFAULT_TEST_PLUGINS] });
  t.teardown(() => relay.close());
  return relay;
}

const relay = await boot();
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-proxy', hostKeys: ['sk-host-key'] });
// A model on two hosts, to name one with X-GW-Host.
await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-two-hosts' });
const secondHost = await seedRoute(relay, { baseUrl: `${second.url}/v1`, adapter: 'anthropic', model: 'claude-two-hosts', hostKeys: ['sk-host-key-2'] });
const secondHostSlug = (await relay.api('GET', `/api/hosts/${secondHost.hostId}`)).body.metadata.slug as string;
const openaiSeed = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-proxy', hostKeys: ['sk-openai-host'] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 4);

const body = JSON.stringify({ model: 'claude-proxy', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

async function send(r: TestRelay, headers: Record<string, string>, path = '/vendor-b/v1/messages', payload = body) {
  const res = await fetch(`${r.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
  return { status: res.status, text: await res.text() };
}

t.test('X-GW-Proxy-Mode values', async (t) => {
  for (const value of ['1', 'true', 'ON', ' yes ']) {
    up.reset();
    const res = await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': value, 'x-api-key': 'sk-client' });
    t.equal(res.status, 200, `"${value}" turns proxy mode on`);
    t.equal(up.lastRequest()?.headers['x-api-key'], 'sk-client', 'the client\'s key went upstream');
  }
  for (const value of ['0', 'false', 'off', 'no']) {
    up.reset();
    second.reset();
    const res = await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': value, 'x-api-key': 'sk-client' });
    t.equal(res.status, 200, `"${value}" leaves it off`);
    t.equal(up.lastRequest()?.headers['x-api-key'], 'sk-host-key', 'a host key went upstream');
  }
  const bad = await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': 'maybe', 'x-api-key': 'sk-client' });
  t.equal(bad.status, 400);
  t.match(JSON.parse(bad.text).error.message, /X-GW-Proxy-Mode must be one of/);
});

t.test('Authorization as the client credential; none at all is a 401', async (t) => {
  up.reset();
  const res = await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': '1', authorization: 'Bearer client-oauth-token' });
  t.equal(res.status, 200);
  t.equal(up.lastRequest()?.headers.authorization, 'Bearer client-oauth-token');
  t.equal(up.lastRequest()?.headers['x-api-key'], undefined, 'no host key added');
  const none = await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': '1' });
  t.equal(none.status, 401);
  t.match(JSON.parse(none.text).error.message, /x-api-key or Authorization/);
});

t.test('a client credential serves only its own request', async (t) => {
  up.reset();
  await send(relay, { 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-client-A' });
  await send(relay, { authorization: `Bearer ${seeded.relayKey}` });
  const [a, b] = up.requests;
  t.equal(a?.headers['x-api-key'], 'sk-client-A');
  t.equal(b?.headers['x-api-key'], 'sk-host-key', 'the next caller gets a host key, not the previous client\'s');
});

t.test('X-GW-Host names the upstream host by slug or id; an unknown host is a 404', async (t) => {
  const twoHosts = body.replace('claude-proxy', 'claude-two-hosts');
  for (const ref of [secondHostSlug, secondHost.hostId, secondHostSlug, secondHost.hostId]) {
    up.reset();
    second.reset();
    const res = await send(relay, { 'x-gw-api-key': secondHost.relayKey, 'x-gw-proxy-mode': '1', 'x-gw-host': ref, 'x-api-key': 'sk-client' }, undefined, twoHosts);
    t.equal(res.status, 200);
    t.equal(second.count, 1, `the host named ${ref === secondHostSlug ? 'by slug' : 'by id'} served it`);
    t.equal(up.count, 0);
    t.equal(second.lastRequest()?.headers['x-gw-host'], undefined, 'X-GW-Host is not forwarded');
  }
  const unknown = await send(relay, { 'x-gw-api-key': secondHost.relayKey, 'x-gw-proxy-mode': '1', 'x-gw-host': 'no-such-host', 'x-api-key': 'sk-client' }, undefined, twoHosts);
  t.equal(unknown.status, 404);
});

t.test('proxy mode outside the allowed prefixes is a 403; X-GW-API-Key alone still authenticates there', async (t) => {
  const chat = JSON.stringify({ model: 'gpt-proxy', messages: [{ role: 'user', content: 'hi' }] });
  const denied = await send(relay, { 'x-gw-api-key': openaiSeed.relayKey, 'x-gw-proxy-mode': '1', authorization: 'Bearer sk-client' }, '/vendor-a/v1/chat/completions', chat);
  t.equal(denied.status, 403);
  up.reset();
  const plain = await send(relay, { 'x-gw-api-key': openaiSeed.relayKey }, '/vendor-a/v1/chat/completions', chat);
  t.equal(plain.status, 200);
  t.equal(up.lastRequest()?.headers.authorization, 'Bearer sk-openai-host');
});

t.test('proxy mode asked for without a relay key is a 401, not a relay-key lookup of the vendor key', async (t) => {
  up.reset();
  const res = await send(relay, { 'x-gw-proxy-mode': '1', 'x-api-key': seeded.relayKey });
  t.equal(res.status, 401);
  t.match(JSON.parse(res.text).error.message, /X-GW-API-Key/);
  t.equal(up.count, 0);
});

t.test('enabled: false refuses proxy mode', async (t) => {
  const off = await boot({ enabled: false });
  const s = await seedRoute(off, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-proxy' });
  await eventually(() => off.relay.sync.snapshot().relayKeys.size >= 1);
  const res = await send(off, { 'x-gw-api-key': s.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-client' });
  t.equal(res.status, 403);
  t.match(JSON.parse(res.text).error.message, /not enabled/);
  const plain = await send(off, { 'x-gw-api-key': s.relayKey });
  t.equal(plain.status, 200, 'X-GW-API-Key still authenticates');
});

t.test('the usage event attributes proxy requests, without credentials', async (t) => {
  up.reset();
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', 'x-gw-api-key': seeded.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-client-secret', 'x-claude-code-session-id': 'sess-1', 'user-agent': 'claude-cli/2.1.197 (external, cli)' },
  });
  t.equal(res.status, 200);
  const requestId = res.headers.get('x-request-id')!;
  await res.arrayBuffer();
  let event: any;
  await eventually(async () => {
    event = ((await relay.api('GET', '/api/logs?limit=50')).body.items as any[]).find((e) => e.request_id === requestId);
    return event !== undefined;
  }, 10_000, 100);
  t.equal(event.client, 'claude-code');
  t.same(event.extras, { proxy_mode: 'true', 'x-claude-code-session-id': 'sess-1' });
  t.equal(event.host_key_id, null);
  t.notOk(JSON.stringify(event).includes('sk-client-secret'));
});

t.test('proxy mode never sends the client credential to a host of another shape (no translation)', async (t) => {
  const openaiOnly = await startFakeUpstream();
  t.teardown(() => openaiOnly.close());
  // A Messages request for a model bound only to an OpenAI host would be translated with a host key;
  // in proxy mode it is refused, and the client's Anthropic key goes nowhere.
  const s = await seedRoute(relay, { baseUrl: `${openaiOnly.url}/v1`, adapter: 'openai', model: 'gpt-only' });
  await eventually(() => [...relay.relay.sync.snapshot().relayKeys.values()].some((k) => k.metadata.id === s.relayKeyId));
  const payload = body.replace('claude-proxy', 'gpt-only');
  const res = await send(relay, { 'x-gw-api-key': s.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-ant-client' }, undefined, payload);
  t.equal(res.status, 404);
  t.equal(openaiOnly.count, 0, 'nothing reached the OpenAI host');
  const translated = await send(relay, { 'x-gw-api-key': s.relayKey }, undefined, payload);
  t.equal(translated.status, 200, 'without proxy mode the request is translated with a host key');
  t.match(openaiOnly.lastRequest()?.headers.authorization, /^Bearer sk-upstream-/, 'the host key');
});

t.test('a caller credential the upstream refuses is not tried on the next host', async (t) => {
  up.reset();
  second.reset();
  const refusal = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  const answer = { status: 401, headers: { 'content-type': 'application/json' }, body: refusal };
  up.enqueue(answer);
  second.enqueue(answer);
  const twoHosts = JSON.stringify({ model: 'claude-two-hosts', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  const res = await send(relay, { 'x-gw-api-key': secondHost.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-wrong-client-key' }, '/vendor-b/v1/messages', twoHosts);
  t.equal(res.status, 401);
  t.equal(res.text, refusal, 'the upstream error arrives unmodified');
  t.equal(up.count + second.count, 1, 'only one host was asked');
});
