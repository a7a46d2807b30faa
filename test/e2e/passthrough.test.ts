// Same-shape passthrough, end to end: Relay on port 0, a fake upstream over real HTTP and SSE.
// For each shape, streamed and not, the client receives exactly the upstream's bytes.
import t from 'tap';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { openai as openaiBodies, startFakeUpstream } from '../support/fake-upstream.ts';
import { WHOLE_COPY_BYTES } from '../../core/pipeline/usage-copy.ts';

const relay = await startRelay();
const openaiUp = await startFakeUpstream({ chunks: 20 });
const anthropicUp = await startFakeUpstream({ chunks: 20 });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const oa = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'gpt-test', upstreamModel: 'gpt-upstream', hostKeys: ['sk-openai-host'] });
const an = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-test', hostKeys: ['sk-ant-host'] });
await eventually(() => relay.relay.sync.snapshot().relayKeyByHash !== undefined && relay.relay.sync.snapshot().relayKeys.size >= 2);

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const viaRelay = (path: string, key: string, body: unknown, extra: Record<string, string> = {}) =>
  post(`${relay.inferenceUrl}${path}`, { authorization: `Bearer ${key}`, ...extra }, body);

const cases = [
  { name: 'chat completions', path: '/vendor-a/v1/chat/completions', up: openaiUp, upPath: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'hi' }] } },
  { name: 'responses', path: '/vendor-a/v1/responses', up: openaiUp, upPath: '/v1/responses', body: { input: 'hi' } },
  { name: 'messages', path: '/vendor-b/v1/messages', up: anthropicUp, upPath: '/v1/messages', body: { max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] } },
];

for (const c of cases) {
  for (const stream of [false, true]) {
    t.test(`${c.name}, ${stream ? 'streamed' : 'not streamed'}: byte for byte`, async (t) => {
      const isOpenAI = c.up === openaiUp;
      const seeded = isOpenAI ? oa : an;
      const body = { model: seeded.modelSlug, ...c.body, ...(stream ? { stream: true } : {}) };
      const got = await viaRelay(c.path, seeded.relayKey, body);
      t.equal(got.status, 200);
      const received = c.up.lastRequest()!;
      // Ask the upstream directly what the client asked (with the binding's model name).
      const direct = await post(`${c.up.url}${c.upPath}`, {}, { ...body, model: received.json.model });
      t.ok(got.bytes.equals(direct.bytes), 'the client receives exactly the upstream bytes');
      t.equal(got.headers.get('content-type'), direct.headers.get('content-type'));
      t.match(got.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
      if (isOpenAI) {
        t.equal(received.json.model, 'gpt-upstream', 'the binding maps the model name');
        t.equal(received.headers.authorization, 'Bearer sk-openai-host', 'the host key, not the relay key, goes upstream');
      } else {
        t.equal(received.json.model, 'claude-test');
        t.equal(received.headers['x-api-key'], 'sk-ant-host');
        t.equal(received.headers.authorization, undefined, 'the relay key never reaches the upstream');
        t.equal(received.headers['anthropic-version'], '2023-06-01');
      }
    });
  }
}

t.test('the request body is forwarded as sent when the model name is unchanged', async (t) => {
  const raw = '{"model":"claude-test",  "max_tokens":5,"messages":[{"role":"user","content":"spaces  kept"}]}';
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': an.relayKey, 'anthropic-beta': 'tools-2024', 'anthropic-version': '2023-06-01' }, body: raw,
  });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const received = anthropicUp.lastRequest()!;
  t.equal(received.body.toString(), raw, 'bytes unchanged');
  t.equal(received.headers['anthropic-beta'], 'tools-2024', 'client headers reach the upstream');
});

t.test('embeddings pass through byte for byte', async (t) => {
  const got = await viaRelay('/vendor-a/v1/embeddings', oa.relayKey, { model: oa.modelSlug, input: ['a', 'b'] });
  t.equal(got.status, 200);
  const direct = await post(`${openaiUp.url}/v1/embeddings`, {}, openaiUp.lastRequest()!.json);
  t.ok(got.bytes.equals(direct.bytes));
});

t.test('an answer past the whole-copy bound (a batch of embeddings): byte for byte, usage read from its tail', async (t) => {
  const answer = Buffer.from(JSON.stringify(openaiBodies.embeddings({ model: 'gpt-upstream', inputs: 400, dimensions: 1536, inputTokens: 4321 })));
  t.ok(answer.length > WHOLE_COPY_BYTES, `${answer.length} bytes`);
  openaiUp.enqueue({ body: answer, headers: { 'content-type': 'application/json' } });
  const got = await viaRelay('/vendor-a/v1/embeddings', oa.relayKey, { model: oa.modelSlug, input: Array.from({ length: 400 }, (_, i) => `text ${i}`) });
  t.equal(got.status, 200);
  t.ok(got.bytes.equals(answer), 'the same bytes');
  const requestId = got.headers.get('x-request-id')!;
  await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).status === 200, 5_000, 50);
  t.match((await relay.api('GET', `/api/logs/${requestId}`)).body, { status: 200, input_tokens: 4321 });
});

t.test('/metrics counts inference requests by shape and status, and their durations', async (t) => {
  const metric = async (line: RegExp) => {
    const text = String((await relay.api<string>('GET', '/metrics')).body);
    const m = line.exec(text);
    return m ? Number(m[1]) : 0;
  };
  const ok = /^relay_inference_requests_total\{shape="anthropic.messages",status="200"\} (\S+)$/m;
  const notFound = /^relay_inference_requests_total\{shape="anthropic.messages",status="404"\} (\S+)$/m;
  const durations = /^relay_inference_duration_seconds_count\{shape="anthropic.messages"\} (\S+)$/m;
  const before = [await metric(ok), await metric(notFound), await metric(durations)];
  for (let i = 0; i < 2; i++) t.equal((await viaRelay('/vendor-b/v1/messages', an.relayKey, { model: an.modelSlug, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status, 200);
  t.equal((await viaRelay('/vendor-b/v1/messages', an.relayKey, { model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status, 404);
  t.same([await metric(ok) - before[0]!, await metric(notFound) - before[1]!, await metric(durations) - before[2]!], [2, 1, 3]);
});

t.test('count_tokens is forwarded with its query string', async (t) => {
  const got = await post(`${relay.inferenceUrl}/vendor-b/v1/messages/count_tokens?beta=true`, { 'x-api-key': an.relayKey },
    { model: an.modelSlug, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.match(JSON.parse(got.bytes.toString()), { input_tokens: Number });
  t.equal(anthropicUp.lastRequest()!.path, '/v1/messages/count_tokens?beta=true');
});

t.test('by default, a streamed chat without include_usage still logs its tokens, and the client gets what it asked for', async (t) => {
  const withInjection = await startRelay({ plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }] });
  t.teardown(() => withInjection.close());
  const seeded = await seedRoute(withInjection, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'gpt-test' });
  const body = { model: 'gpt-test', messages: [{ role: 'user', content: 'count me' }], stream: true };
  const res = await post(`${withInjection.inferenceUrl}/vendor-a/v1/chat/completions`, { authorization: `Bearer ${seeded.relayKey}` }, body);
  t.equal(res.status, 200, res.bytes.toString().slice(0, 300));
  const received = openaiUp.lastRequest()!;
  t.same(received.json.stream_options, { include_usage: true }, 'the upstream is asked for usage');
  const text = res.bytes.toString();
  t.notMatch(text, /"choices":\[\]/, 'the usage-only chunk is hidden from the client');
  t.notMatch(text, /"usage"/, 'and so is the "usage":null the other chunks then carry');
  const direct = await post(`${openaiUp.url}/v1/chat/completions`, { authorization: 'Bearer sk-direct' }, body);
  t.equal(text, direct.bytes.toString(), 'the bytes the client would have got without Relay');
  t.match(text, /data: \[DONE\]\n\n$/, 'the stream still ends as the upstream ended it');
  const requestId = res.headers.get('x-request-id')!;
  await eventually(async () => (await withInjection.api('GET', `/api/logs/${requestId}`)).status === 200, 5_000, 50);
  const log = (await withInjection.api('GET', `/api/logs/${requestId}`)).body;
  t.ok(log.input_tokens > 0 && log.output_tokens > 0, 'tokens are recorded');

  // An agent-sized chat rewritten for usage: the same JSON whole.
  const big = { model: 'gpt-test', messages: Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} caf\u00e9 ${'x'.repeat(5_000)}` })), stream: true };
  const bigRes = await post(`${withInjection.inferenceUrl}/vendor-a/v1/chat/completions`, { authorization: `Bearer ${seeded.relayKey}` }, big);
  t.equal(bigRes.status, 200, bigRes.bytes.toString().slice(0, 300));
  t.same(openaiUp.lastRequest()!.json, { ...big, stream_options: { include_usage: true } }, 'a 200 KB body rewritten for usage arrives whole');
});

t.test('usage is read from the passthrough tap into the request log', async (t) => {
  const got = await viaRelay('/vendor-a/v1/chat/completions', oa.relayKey, { model: oa.modelSlug, messages: [{ role: 'user', content: 'count me' }], stream: true, stream_options: { include_usage: true } });
  t.equal(got.status, 200);
  const requestId = got.headers.get('x-request-id')!;
  await eventually(async () => (await relay.api('GET', `/api/logs/${requestId}`)).status === 200, 5_000, 50);
  const log = (await relay.api('GET', `/api/logs/${requestId}`)).body;
  t.equal(log.status, 200);
  t.equal(log.stream, true);
  t.equal(log.model_slug, 'gpt-test');
  t.equal(log.upstream_model, 'gpt-upstream');
  t.ok(log.input_tokens > 0 && log.output_tokens > 0, 'token counts come from the stream');
  t.equal(log.relay_key_id, oa.relayKeyId);
});

t.test('the models list shows what the key can reach', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/models`, { headers: { authorization: `Bearer ${oa.relayKey}` } });
  const body = await res.json() as { object: string; data: Array<{ id: string }> };
  t.equal(body.object, 'list');
  t.same(body.data.map((m) => m.id), ['gpt-test']);
  const canonical = await (await fetch(`${relay.inferenceUrl}/v1/models`, { headers: { authorization: `Bearer ${an.relayKey}` } })).json() as { models: Array<{ slug: string }> };
  t.same(canonical.models.map((m) => m.slug), ['claude-test']);
});
