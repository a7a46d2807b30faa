// Usage logging and payload capture through Relay: real requests through the inference port,
// read back through /api/logs and /api/usage/* with every filter, on each backend selected at
// run time (file, postgres, valkey, clickhouse in-process through chdb); the payload gate's four
// cases; truncation at maxBytes.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startS3 } from '../support/s3.ts';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';

const redisDb = 7;
const redis = new Redis(`redis://127.0.0.1:6379/${redisDb}`);
await redis.flushdb();
const upstream = await startFakeUpstream({ chunks: 20 });
const s3 = await startS3('relay-payloads');
// payload-s3 reads its credentials from the environment variables its options name.
process.env.TEST_S3_ACCESS_KEY_ID = s3.accessKeyId;
process.env.TEST_S3_SECRET_ACCESS_KEY = s3.secretAccessKey;
const relay = await startRelay({
  plugins: [
    { use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' },
    { use: 'log-file' }, { use: 'log-postgres' }, { use: 'log-valkey', options: { url: `redis://127.0.0.1:6379/${redisDb}`, keyPrefix: `relay:test:${randomBytes(3).toString('hex')}:` } },
    { use: 'log-clickhouse', options: { embedded: { path: ':memory:' } } },
    { use: 'payload-file' },
    { use: 'payload-s3', options: {
      bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, checksums: 'WHEN_REQUIRED',
      credentials: { fromEnv: { accessKeyId: 'TEST_S3_ACCESS_KEY_ID', secretAccessKey: 'TEST_S3_SECRET_ACCESS_KEY' } },
    } },
  ],
});
t.teardown(async () => {
  await relay.close();
  await upstream.close();
  await s3.close();
  redis.disconnect();
});

const a = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a' });
const b = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-b' });

async function chat(key: string, model: string, stream = false, content = 'hi'): Promise<string> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }], ...(stream ? { stream_options: { include_usage: true } } : {}) }),
  });
  await res.arrayBuffer();
  return res.headers.get('x-request-id')!;
}

async function logged(requestId: string): Promise<any> {
  await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).status === 200, 5_000, 50);
  return (await relay.api('GET', `/api/logs/${requestId}`)).body;
}

for (const backend of ['file', 'postgres', 'valkey', 'clickhouse']) {
  t.test(`usage backend ${backend}: requests read back with every filter`, async (t) => {
    const put = await relay.api('PUT', '/api/settings/usage-logging', { backend });
    t.equal(put.status, 200, `selected ${backend}`);
    // From now: reads cover every loaded backend, so the earlier backends' requests are outside the window.
    const since = new Date().toISOString();
    const okA = await chat(a.relayKey, 'model-a');
    const streamB = await chat(b.relayKey, 'model-b', true);
    const denied = await chat(a.relayKey, 'model-b'); // a's policy does not grant model-b: 403
    for (const id of [okA, streamB, denied]) await logged(id);

    const list = async (query: string) => (await relay.api('GET', `/api/logs?${query}&from=${encodeURIComponent(since)}`)).body.items.map((e: any) => e.request_id);
    t.same(await list(''), [denied, streamB, okA], 'newest first');
    t.same(await list(`modelId=${a.modelId}`), [okA]);
    t.same(await list(`relayKeyId=${b.relayKeyId}`), [streamB]);
    t.same(await list(`policyId=${a.policyId}`), [denied, okA]);
    t.same(await list(`status=${encodeURIComponent('>=400')}`), [denied]);
    t.same(await list('status=200'), [streamB, okA]);
    const lastHour = (await relay.api('GET', `/api/logs?since=1h&relayKeyId=${b.relayKeyId}`)).body.items.map((e: any) => e.request_id);
    t.equal(lastHour[0], streamB, 'a relative window');
    const before = (await relay.api('GET', `/api/logs?to=${encodeURIComponent(since)}&modelId=${a.modelId}`)).body.items.map((e: any) => e.request_id);
    t.notOk(before.includes(okA), 'an absolute window excludes what came after it');

    const page1 = await relay.api('GET', `/api/logs?limit=2&from=${encodeURIComponent(since)}`);
    t.equal(page1.body.items.length, 2);
    const page2 = await relay.api('GET', `/api/logs?limit=2&from=${encodeURIComponent(since)}&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    t.same(page2.body.items.map((e: any) => e.request_id), [okA], 'the cursor continues where the page ended');

    const detail = await logged(streamB);
    t.equal(detail.stream, true);
    t.ok(detail.output_tokens > 0, 'tokens from the stream tap');
    t.equal((await logged(denied)).status, 403);

    const summary = await relay.api('GET', `/api/usage/summary?from=${encodeURIComponent(since)}&groupBy=model`);
    t.equal(summary.status, 200);
    t.equal(summary.body.totals.requests, 3);
    t.equal(summary.body.totals.errors, 1);
    const series = await relay.api('GET', `/api/usage/timeseries?since=1h&bucket=5m&modelId=${b.modelId}`);
    t.equal(series.status, 200);
    const total = series.body.points.reduce((n: number, p: any) => n + p.totals.requests, 0);
    t.ok(total >= 1, 'the time series counts the request');
  });
}

t.test('the payload gate: captured only when enabled globally and the policy or key opts in', async (t) => {
  await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' });
  const keyOptIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', relayKey: { payloadLoggingEnabled: true } });
  const policyOptIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', policy: { payloadLoggingEnabled: true } });
  const neither = a;
  const bodyOf = async (id: string) => (await logged(id)).request_body;

  await relay.api('PUT', '/api/settings/payload-logging', { enabled: false, backend: 'file', maxBytes: 100_000 });
  await eventually(() => relay.relay.settings.get('payload-logging').enabled === false);
  t.equal(await bodyOf(await chat(keyOptIn.relayKey, 'model-a')), undefined, 'global off: nothing, even with the key opted in');

  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 100_000 });
  await eventually(() => relay.relay.settings.get('payload-logging').enabled === true);
  t.equal(await bodyOf(await chat(neither.relayKey, 'model-a')), undefined, 'global on, neither opted in: nothing');
  const byKey = await chat(keyOptIn.relayKey, 'model-a', false, 'key opted in');
  await eventually(async () => (await logged(byKey)).request_body !== undefined, 5_000, 50);
  t.match((await logged(byKey)).request_body, 'key opted in');
  const byPolicy = await chat(policyOptIn.relayKey, 'model-a', true, 'policy opted in');
  await eventually(async () => (await logged(byPolicy)).response_body !== undefined, 5_000, 50);
  const detail = await logged(byPolicy);
  t.match(detail.request_body, 'policy opted in');
  t.match(detail.response_body, /data: \[DONE\]/, 'the streamed response is captured as streamed');
  t.match(detail.response_headers, { 'content-type': /^text\/event-stream/, 'x-request-id': byPolicy }, 'the head sent to the client is captured');
  t.match((await logged(byKey)).response_headers, { 'content-type': /^application\/json/, 'x-request-id': byKey }, 'so is a JSON answer\'s');
  t.equal(detail.request_truncated, false);
  t.equal(detail.response_truncated, false);
  t.notMatch(JSON.stringify(detail), policyOptIn.relayKey, 'the relay key is not in the captured record');
});

t.test('truncation at maxBytes for a request body and a streamed response', async (t) => {
  const optIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', relayKey: { payloadLoggingEnabled: true } });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 200 });
  await eventually(() => relay.relay.settings.get('payload-logging').maxBytes === 200);
  const id = await chat(optIn.relayKey, 'model-a', true, 'x'.repeat(1000));
  await eventually(async () => (await logged(id)).request_truncated !== undefined, 5_000, 50);
  const detail = await logged(id);
  t.equal(detail.request_truncated, true);
  t.equal(detail.response_truncated, true);
  t.ok(Buffer.byteLength(detail.request_body) <= 200);
  t.ok(Buffer.byteLength(detail.response_body) <= 200);
});

t.test('a request body that came in many reads is captured whole, in order', async (t) => {
  const optIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', relayKey: { payloadLoggingEnabled: true } });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 1_000_000 });
  await eventually(() => relay.relay.settings.get('payload-logging').maxBytes === 1_000_000);
  // Over 200 KB of distinct lines: a part left out or out of order changes the text.
  const content = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
  const id = await chat(optIn.relayKey, 'model-a', false, content);
  await eventually(async () => (await logged(id)).request_body !== undefined, 5_000, 50);
  const detail = await logged(id);
  t.equal(detail.request_truncated, false);
  t.equal(JSON.parse(detail.request_body).messages[0].content, content);
  t.equal(upstream.requests.at(-1)!.body.toString('utf8'), detail.request_body, 'what was captured is what went upstream');
});

t.test('requests refused before the pipeline are logged too', async (t) => {
  await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' });
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${a.relayKey}`, 'content-type': 'application/json' }, body: '{"model": "model-a", ',
  });
  t.equal(res.status, 400);
  const detail = await logged(res.headers.get('x-request-id')!);
  t.equal(detail.status, 400);
  t.equal(detail.error_code, 'RELAY_ERR_INVALID_JSON');
  t.equal(detail.inbound_shape, 'openai.chat');
});

t.test('payload capture to S3: bodies readable through the logs API, stored content-addressed', async (t) => {
  const optIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', relayKey: { payloadLoggingEnabled: true } });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 's3', maxBytes: 100_000 });
  await eventually(() => relay.relay.settings.get('payload-logging').backend === 's3');
  const id = await chat(optIn.relayKey, 'model-a', true, 'to the bucket');
  await eventually(async () => (await logged(id)).response_body !== undefined, 10_000, 100);
  const detail = await logged(id);
  t.match(detail.request_body, 'to the bucket');
  t.match(detail.response_body, /data: \[DONE\]/);
  const client = s3.client();
  const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
  client.destroy();
  const keys = (listed.Contents ?? []).map((o) => o.Key ?? '');
  t.ok(keys.some((k) => /[0-9a-f]{64}/.test(k)), `blobs are keyed by sha256 (${keys.length} objects)`);
  t.notOk(keys.some((k) => k.includes(optIn.relayKey)), 'no secret in an object key');
});

t.test('switching backends hides nothing: reads cover every loaded usage and payload backend', async (t) => {
  const optIn = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a', relayKey: { payloadLoggingEnabled: true } });
  const since = new Date().toISOString();
  await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 100_000 });
  await eventually(() => relay.relay.settings.get('payload-logging').backend === 'file' && relay.relay.settings.get('usage-logging').backend === 'file');
  const before = await chat(optIn.relayKey, 'model-a', false, 'before the switch');
  await eventually(async () => (await logged(before)).request_body !== undefined, 5_000, 50);

  for (const [setting, value] of [['usage-logging', { backend: 'postgres' }], ['payload-logging', { enabled: true, backend: 's3', maxBytes: 100_000 }]] as const) {
    t.equal((await relay.api('PUT', `/api/settings/${setting}`, value)).status, 200, `switched ${setting} to ${value.backend}`);
  }
  await eventually(() => relay.relay.settings.get('payload-logging').backend === 's3' && relay.relay.settings.get('usage-logging').backend === 'postgres');
  const after = await chat(optIn.relayKey, 'model-a', false, 'after the switch');
  await eventually(async () => (await logged(after)).request_body !== undefined, 10_000, 100);

  const detail = await logged(before);
  t.equal(detail.request_id, before, 'the record written to file before the switch is found');
  t.match(detail.request_body, 'before the switch', 'and its payload, from the payload backend it went to');
  t.match((await logged(after)).request_body, 'after the switch');
  const window = `from=${encodeURIComponent(since)}&relayKeyId=${optIn.relayKeyId}`;
  const list = await relay.api('GET', `/api/logs?${window}`);
  t.same(list.body.items.map((e: any) => e.request_id), [after, before], 'the list merges both backends, newest first');
  t.equal(list.body.skipped, undefined, 'every backend answered');
  const page1 = await relay.api('GET', `/api/logs?${window}&limit=1`);
  t.same(page1.body.items.map((e: any) => e.request_id), [after]);
  const page2 = await relay.api('GET', `/api/logs?${window}&limit=1&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
  t.same(page2.body.items.map((e: any) => e.request_id), [before], 'paging crosses from one backend to the other');
  t.equal(page2.body.nextCursor, null);
  const summary = await relay.api('GET', `/api/usage/summary?${window}&groupBy=model`);
  t.equal(summary.body.totals.requests, 2, 'the summary counts both');
  t.equal(summary.body.groups.length, 1, 'one model, its group merged across backends');
  t.equal(summary.body.groups[0].totals.requests, 2);
  const series = await relay.api('GET', `/api/usage/timeseries?since=1h&bucket=1h&relayKeyId=${optIn.relayKeyId}`);
  t.equal(series.body.points.reduce((n: number, p: any) => n + p.totals.requests, 0), 2, 'so does the time series');
  await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' });
  await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 100_000 });
});

t.test("a slug where a filter takes an id is a 400 naming the id, not an empty answer; a deleted entity's id still filters", async (t) => {
  const policySlug = relay.relay.sync.snapshot().policies.get(a.policyId)!.metadata.slug;
  for (const [path, param, slug, id] of [
    ['/api/logs', 'modelId', 'model-a', a.modelId],
    ['/api/usage/summary', 'policyId', policySlug, a.policyId],
    ['/api/usage/timeseries', 'modelId', 'model-a', a.modelId],
    ['/api/usage/sessions', 'modelId', 'model-a', a.modelId],
  ] as const) {
    const res = await relay.api<any>('GET', `${path}?since=1h&${param}=${encodeURIComponent(slug)}`);
    t.equal(res.status, 400, `${path} ${param}=<slug>`);
    t.match(res.body.error, { code: 'RELAY_ERR_BAD_REQUEST', field: param, message: new RegExp(`${param} takes an id, and "${slug}" is a slug: use ${id}`) });
    t.equal((await relay.api('GET', `${path}?since=1h&${param}=${id}`)).status, 200, `${path} ${param}=<id>`);
  }
  const gone = (await relay.api('GET', '/api/logs?since=1h&modelId=00000000-0000-4000-8000-000000000000')).status;
  t.equal(gone, 200, 'an id the catalog does not have (a deleted model) still filters');
  const session = await relay.api<any>('GET', '/api/usage/sessions/some-thread?relayKeyId=not-a-slug-of-anything');
  t.equal(session.status, 404, 'a session read with an unknown key id: not found, as before');
});
