// Every request is logged (SPEC), not only inference calls: the model lists, Claude Code's HEAD
// probe and paths no route knows each leave a usage event naming the relay key when one was
// checked, the status, the error code and the endpoint asked. The listener's own probes and
// /openapi.json are not API requests and leave none.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }] });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'answered-model', policy: { modelIds: '*' } });
await routeLive(relay, seeded);

async function send(method: string, path: string, key: string | null): Promise<{ status: number; requestId: string; body: string }> {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, requestId: res.headers.get('x-request-id')!, body: await res.text() };
}

t.test('each model list is recorded under the relay key that asked', async (t) => {
  for (const [path, shape] of [
    ['/vendor-a/v1/models', 'openai.chat'],
    ['/vendor-b/v1/models', 'anthropic.messages'],
    ['/v1/models', 'canonical'],
    ['/agent-a/v1/models', 'openai.responses'],
  ] as const) {
    const res = await send('GET', `${path}?client_version=0.1`, seeded.relayKey);
    t.equal(res.status, 200, path);
    const record = await usageRecord(relay, res.requestId);
    t.match(record, {
      request_id: res.requestId, status: 200, error_code: null, relay_key_id: seeded.relayKeyId, policy_id: seeded.policyId,
      inbound_shape: shape, model_requested: null, input_tokens: 0, output_tokens: 0, stream: false,
      extras: { endpoint: `GET ${path}` },
    }, path);
    t.ok(record.latency_ms >= 0 && Date.parse(record.started_at) <= Date.parse(record.finished_at), `${path}: timed`);
  }
});

t.test('a model list refused for a bad key is recorded with its 401 and no key', async (t) => {
  const res = await send('GET', '/vendor-a/v1/models', 'rk_not_a_real_key_0000000000000000');
  t.equal(res.status, 401);
  const record = await usageRecord(relay, res.requestId);
  t.match(record, { status: 401, error_code: 'RELAY_ERR_RELAY_KEY_INVALID', relay_key_id: null, inbound_shape: 'openai.chat', extras: { endpoint: 'GET /vendor-a/v1/models' } });
  t.notMatch(JSON.stringify(record), /rk_not_a_real_key/, 'the presented key is not in the record');
});

t.test('unknown paths are recorded with their 404, in the shape of their prefix', async (t) => {
  const shaped = await send('POST', '/vendor-b/v1/nope?secret=abc', seeded.relayKey);
  t.equal(shaped.status, 404);
  t.match(JSON.parse(shaped.body), { type: 'error', error: { type: 'not_found_error' } }, 'answered in the Anthropic shape');
  const record = await usageRecord(relay, shaped.requestId);
  t.match(record, { status: 404, error_code: 'RELAY_ERR_NOT_FOUND', inbound_shape: 'anthropic.messages', extras: { endpoint: 'POST /vendor-b/v1/nope' } });
  t.notMatch(JSON.stringify(record), /secret=abc/, 'the query string is left out');

  const bare = await send('GET', `/x/${'a'.repeat(500)}`, null);
  t.equal(bare.status, 404);
  const bareRecord = await usageRecord(relay, bare.requestId);
  t.match(bareRecord, { status: 404, error_code: 'RELAY_ERR_NOT_FOUND', inbound_shape: 'canonical', relay_key_id: null });
  t.equal(bareRecord.extras.endpoint, `GET /x/${'a'.repeat(500)}`.slice(0, 'GET '.length + 200), 'a long path is cut to 200 characters');
});

t.test("Claude Code's HEAD probe is recorded", async (t) => {
  const res = await send('HEAD', '/vendor-b', null);
  t.equal(res.status, 200);
  t.match(await usageRecord(relay, res.requestId), { status: 200, error_code: null, inbound_shape: 'anthropic.messages', extras: { endpoint: 'HEAD /vendor-b' } });
});

t.test('the probes and /openapi.json leave no usage event', async (t) => {
  const probes = [await send('GET', '/healthz', null), await send('GET', '/livez', null), await send('GET', '/readyz', null)];
  const openapi = await send('GET', '/openapi.json', null);
  for (const probe of probes) t.equal(probe.status, 200);
  t.equal(openapi.status, 200);
  // A request recorded after them has reached the log, so theirs would have too.
  const later = await send('GET', '/vendor-a/v1/models', seeded.relayKey);
  await usageRecord(relay, later.requestId);
  for (const res of [...probes, openapi]) t.equal((await relay.api('GET', `/api/logs/${res.requestId}`)).status, 404, `${res.requestId} not logged`);
});

t.test('an inference request is still recorded once', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'answered-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  await res.text();
  const requestId = res.headers.get('x-request-id')!;
  t.match(await usageRecord(relay, requestId), { status: 200, model_slug: 'answered-model', extras: {} });
  const listed = await relay.api<{ items: Array<{ request_id: string }> }>('GET', `/api/logs?relayKeyId=${seeded.relayKeyId}&limit=500`);
  t.equal(listed.body.items.filter((item) => item.request_id === requestId).length, 1);
});
