// AWS Bedrock end to end: a real Relay with vendor-bedrock loaded, and a fake Bedrock runtime
// that verifies SigV4 with AWS's signer and streams in AWS's binary event-stream framing
// (test/support/fake-bedrock.ts). Host options checked on write; Chat clients translated
// through Converse; Messages clients passed through InvokeModel; a refused signature marks the
// key; Bedrock's throttling and Anthropic's overload fail over across vendors before the first byte.
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { converseAnswer, startFakeBedrock, type BedrockAction } from '../support/fake-bedrock.ts';
import { faults, parseSse, startFakeUpstream } from '../support/fake-upstream.ts';
import { hostKeyHealth, readThenAbort, setBindingWeights, settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const KEY = { accessKeyId: 'AKIAE2EBEDROCK0001', secretAccessKey: 'e2e/Secret+Key0123456789abcdefghijklmno' };
const REGION = 'us-west-2';
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }] });
const bedrock = await startFakeBedrock({ keys: [KEY], region: REGION });
const anthropicUp = await startFakeUpstream({ chunks: 3 });
t.teardown(async () => {
  await relay.close();
  await bedrock.close();
  await anthropicUp.close();
});

const goodKey = `${KEY.accessKeyId}:${KEY.secretAccessKey}`;
let seq = 0;

async function seedBedrock(o: { model?: string; key?: string; shapes?: string[] } = {}): Promise<Seeded> {
  const seeded = await seedRoute(relay, {
    baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: o.model ?? `bedrock-${++seq}`, upstreamModel: CLAUDE,
    hostKeys: [o.key ?? goodKey], hostOptions: { region: REGION, endpoint: bedrock.url }, ...(o.shapes ? { shapes: o.shapes } : {}),
  });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.hostKeysOfHost(seeded.hostId).length === 1
    && s.models.get(seeded.modelId)?.spec.bindings.some((b) => b.hostId === seeded.hostId) === true);
  return seeded;
}

function once(action: BedrockAction): void {
  let used = false;
  bedrock.script(() => {
    if (used) return undefined;
    used = true;
    return action;
  });
}

const chat = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
const messages = (model: string, stream = false) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });
const anthropicText = (sse: string) => parseSse(sse).map((f) => JSON.parse(f.data)).filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('');

t.test('host options are checked on every host write: a 400 naming the option', async (t) => {
  const provider = await relay.api('POST', '/api/providers', { metadata: { displayName: 'bedrock options' }, spec: { adapter: 'bedrock' } });
  const host = (options: unknown) => relay.api('POST', '/api/hosts', {
    metadata: { displayName: `bedrock host ${++seq}` }, spec: { providerId: provider.body.metadata.id, baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', options },
  });
  const missing = await host({});
  t.equal(missing.status, 400);
  t.match(JSON.stringify(missing.body), /region/, 'names the missing region');
  const badRegion = await host({ region: 'Mars 1' });
  t.equal(badRegion.status, 400);
  t.match(JSON.stringify(badRegion.body), /\/spec\/options\/region/);
  const badCredentials = await host({ region: 'us-east-1', credentials: 'magic' });
  t.equal(badCredentials.status, 400);
  t.match(JSON.stringify(badCredentials.body), /\/spec\/options\/credentials/);
  const unknown = await host({ region: 'us-east-1', project: 'x' });
  t.equal(unknown.status, 400);
  t.match(JSON.stringify(unknown.body), /project/);
  t.equal((await host({ region: 'us-east-1', credentials: 'chain' })).status, 201);
});

t.test('a Chat client reaches a Bedrock model through Converse, signed with SigV4', async (t) => {
  const s = await seedBedrock();
  const before = bedrock.requests.length;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(res.status, 200, res.text);
  t.equal(JSON.parse(res.text).choices[0].message.content, 'Hello from Bedrock');
  const sent = bedrock.requests[before];
  t.equal(sent.operation, 'converse');
  t.equal(sent.modelId, CLAUDE);
  t.equal(sent.principal, KEY.accessKeyId, 'the fake verified the signature');
  // The last message ends in a cache point: vendor-bedrock's cacheTranslated, for Claude models.
  t.same(sent.body.messages, [{ role: 'user', content: [{ text: 'hi' }, { cachePoint: { type: 'default' } }] }]);
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.input_tokens, 7);
  t.equal(usage.upstream_shape, 'bedrock.converse');

  const streamed = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug, true));
  t.equal(streamed.status, 200);
  const chunks = parseSse(streamed.text).filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data));
  t.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'Hello from Bedrock', 'ConverseStream decoded from the binary event stream');
  t.equal(chunks.at(-1).usage.prompt_tokens, 7);
  t.equal(bedrock.requests.at(-1)!.operation, 'converse-stream');
});

t.test('a Messages client reaches Claude on Bedrock through InvokeModel, as Anthropic SSE', async (t) => {
  const s = await seedBedrock();
  const res = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug, true), { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14,claude-code-20250219' });
  t.equal(res.status, 200, res.text);
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  t.equal(anthropicText(res.text), 'Hello from Claude on Bedrock');
  const sent = bedrock.requests.at(-1)!;
  t.equal(sent.operation, 'invoke-with-response-stream');
  t.notOk('model' in sent.body);
  t.equal(sent.body.anthropic_version, 'bedrock-2023-05-31');
  t.same(sent.body.anthropic_beta, ['interleaved-thinking-2025-05-14']);
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.upstream_shape, 'anthropic.messages', 'passed through');
  t.equal(usage.output_tokens, 4);

  const json = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug), { 'anthropic-version': '2023-06-01' });
  t.equal(json.status, 200);
  t.equal(JSON.parse(json.text).content[0].text, 'Hello from Claude on Bedrock');
  t.equal(bedrock.requests.at(-1)!.operation, 'invoke');
});

t.test('a host key whose signature the upstream refuses: 502 to the caller, the key marked invalid, no secret echoed', async (t) => {
  const s = await seedBedrock({ key: `${KEY.accessKeyId}:wrong-secret-value` });
  const refused = bedrock.refused;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(res.status, 502);
  t.notMatch(res.text, /wrong-secret-value/);
  t.equal(bedrock.refused, refused + 1, 'the fake refused the signature');
  const health = await hostKeyHealth(relay);
  t.equal(health.get(s.hostKeyIds[0])?.state, 'invalid');
});

t.test('a host key that is neither AWS keys nor an API key is refused like a bad signature (marked invalid), not reported as an unreachable host', async (t) => {
  const s = await seedBedrock({ key: 'AKIAMALFORMED:not-a-secret-part:tok:extra' });
  const before = bedrock.requests.length + bedrock.refused;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(res.status, 502, res.text);
  t.notMatch(res.text, /could not be reached/, 'not called an unreachable upstream');
  t.notMatch(res.text, /not-a-secret-part/, 'the value is never quoted');
  t.equal(bedrock.requests.length + bedrock.refused, before, 'nothing was sent to AWS');
  const health = await hostKeyHealth(relay);
  t.equal(health.get(s.hostKeyIds[0])?.state, 'invalid', 'the key is out of rotation until an operator fixes it');
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.error_code, 'RELAY_ERR_HOST_KEY_REFUSED');
  t.match(res.text, /Relay did not send the request: the host key is not ACCESS_KEY_ID:SECRET_ACCESS_KEY/, 'the caller and the operator read why');
});

/** One model bound to an Anthropic host (weight 1000, tried first) and a Bedrock host (weight 1). */
async function anthropicThenBedrock(): Promise<{ a: Seeded; b: Seeded }> {
  const a = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: `cross-${++seq}`, hostKeys: [`sk-ant-${seq}`] });
  const b = await seedBedrock({ model: a.modelSlug });
  await setBindingWeights(relay, a.modelId, { [a.hostId]: 1000, [b.hostId]: 1 });
  // Both hosts' keys too: a key not yet in this instance's snapshot would leave its host out of the candidates.
  await settled(relay, (snap) => snap.models.get(a.modelId)?.spec.bindings.find((x) => x.hostId === a.hostId)?.weight === 1000
    && snap.relayKeys.has(a.relayKeyId) && snap.hostKeysOfHost(a.hostId).length > 0 && snap.hostKeysOfHost(b.hostId).length > 0);
  return { a, b };
}

t.test('failover across vendors before the first byte: Anthropic overloaded, Bedrock serves', async (t) => {
  const { a, b } = await anthropicThenBedrock();
  anthropicUp.enqueue(faults.serverError({ vendor: 'anthropic', status: 529 }));
  const before = bedrock.requests.length;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', a.relayKey, messages(a.modelSlug, true), { 'anthropic-version': '2023-06-01' });
  t.equal(res.status, 200, res.text);
  t.equal(anthropicText(res.text), 'Hello from Claude on Bedrock');
  t.equal(bedrock.requests.length, before + 1);
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.attempts, 2);
  t.equal(usage.host_id, b.hostId);
});

t.test("Bedrock's throttling and a model not ready fail over like any 429/5xx, and cool the key down", async (t) => {
  const s = await seedBedrock();
  const other = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: s.modelSlug, hostKeys: [`sk-ant-${++seq}`] });
  await setBindingWeights(relay, s.modelId, { [s.hostId]: 1000, [other.hostId]: 1 });
  await settled(relay, (snap) => snap.models.get(s.modelId)?.spec.bindings.find((x) => x.hostId === s.hostId)?.weight === 1000
    && snap.hostKeysOfHost(s.hostId).length > 0 && snap.hostKeysOfHost(other.hostId).length > 0);
  once({ kind: 'json', status: 429, body: { message: 'Too many requests, please wait before trying again.' }, errorType: 'ThrottlingException' });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug), { 'anthropic-version': '2023-06-01' });
  t.equal(res.status, 200, res.text);
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.host_id, other.hostId, 'the Anthropic host answered');
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0])?.state, 'cooling', 'the throttled Bedrock key cools down');

  const t2 = await seedBedrock();
  const fallback = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: t2.modelSlug, hostKeys: [`sk-ant-${++seq}`] });
  await setBindingWeights(relay, t2.modelId, { [t2.hostId]: 1000, [fallback.hostId]: 1 });
  await settled(relay, (snap) => snap.models.get(t2.modelId)?.spec.bindings.find((x) => x.hostId === t2.hostId)?.weight === 1000
    && snap.hostKeysOfHost(t2.hostId).length > 0 && snap.hostKeysOfHost(fallback.hostId).length > 0);
  once({ kind: 'json', status: 429, body: { message: 'Model is not ready for inference.' }, errorType: 'ModelNotReadyException' });
  const chatRes = await viaRelay(relay, '/vendor-a/v1/chat/completions', t2.relayKey, chat(t2.modelSlug));
  t.equal(chatRes.status, 200, chatRes.text);
  const chatUsage = await usageRecord(relay, chatRes.headers.get('x-request-id')!);
  t.equal(chatUsage.host_id, fallback.hostId, 'a model not ready (503) fails over');
  t.equal(chatUsage.attempts, 2);
});

t.test('the last candidate: Bedrock throttling reaches a Chat client as a 429 in its shape', async (t) => {
  const s = await seedBedrock();
  once({ kind: 'json', status: 429, body: { message: 'Too many tokens, please wait before trying again.' }, errorType: 'ThrottlingException' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(res.status, 429);
  t.match(JSON.parse(res.text).error.message, /Too many tokens/);
});

t.test('a throttling exception inside the stream, before any output, fails over like a 429', async (t) => {
  const s = await seedBedrock();
  const other = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: s.modelSlug, hostKeys: [`sk-ant-${++seq}`] });
  await setBindingWeights(relay, s.modelId, { [s.hostId]: 1000, [other.hostId]: 1 });
  await settled(relay, (snap) => snap.models.get(s.modelId)?.spec.bindings.find((x) => x.hostId === s.hostId)?.weight === 1000
    && snap.hostKeysOfHost(s.hostId).length > 0 && snap.hostKeysOfHost(other.hostId).length > 0);
  once({ kind: 'events', messages: [{ event: 'messageStart', payload: { role: 'assistant' } }, { exception: 'throttlingException', message: 'Too many tokens, please wait.' }] });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug, true));
  t.equal(res.status, 200);
  t.match(res.text, /fake upstream/, 'the Anthropic host answered the stream');
  t.notMatch(res.text, /Too many tokens/, 'nothing of the failed stream reached the client');
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.attempts, 2);
  t.equal(usage.host_id, other.hostId);
});

t.test('an in-stream throttling exception before any output is a rate limit: the key cools, a fallback taking only rate_limit answers', async (t) => {
  const s = await seedBedrock();
  const spill = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: `spill-${++seq}`, hostKeys: [`sk-ant-${seq}`] });
  t.equal((await relay.api('PUT', `/api/policies/by-id/${s.policyId}`, { spec: { modelIds: [s.modelId, spill.modelId] } })).status, 200);
  t.equal((await relay.api('PUT', `/api/models/by-id/${s.modelId}`, { spec: { fallbacks: [{ modelId: spill.modelId, on: ['rate_limit'] }] } })).status, 200);
  await settled(relay, (snap) => snap.models.get(s.modelId)?.spec.fallbacks?.length === 1 && snap.policies.get(s.policyId)?.spec.modelIds.length === 2
    && snap.hostKeysOfHost(spill.hostId).length > 0);
  once({ kind: 'events', messages: [{ event: 'messageStart', payload: { role: 'assistant' } }, { exception: 'throttlingException', message: 'Too many tokens, please wait.' }] });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug, true));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), spill.modelSlug, 'the rate_limit fallback answered');
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(String(usage.extras.relay_model_attempts), /"outcome":"rate_limit"/);
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0])?.state, 'cooling', 'the throttled key cools down as after an HTTP 429');
});

t.test("Messages clients' count_tokens reaches Bedrock's CountTokens and answers in Anthropic's shape", async (t) => {
  const s = await seedBedrock();
  const body = { model: s.modelSlug, messages: [{ role: 'user', content: 'count me, please' }], system: 'be brief' };
  const res = await viaRelay(relay, '/vendor-b/v1/messages/count_tokens?beta=true', s.relayKey, body, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219' });
  t.equal(res.status, 200, res.text);
  const sent = bedrock.requests.at(-1)!;
  t.equal(sent.operation, 'count-tokens');
  t.equal(sent.principal, KEY.accessKeyId);
  const invoke = JSON.parse(Buffer.from((sent.body.input as { invokeModel: { body: string } }).invokeModel.body, 'base64').toString('utf8')) as Record<string, unknown>;
  t.same(invoke.messages, body.messages, 'the InvokeModel body, base64 in input.invokeModel.body');
  t.equal(invoke.anthropic_version, 'bedrock-2023-05-31');
  t.notOk('model' in invoke);
  t.equal(typeof invoke.max_tokens, 'number', 'the max_tokens a Messages body needs');
  const answer = JSON.parse(res.text) as { input_tokens: number };
  t.equal(answer.input_tokens, Math.ceil(Buffer.from(JSON.stringify(invoke)).length / 4), "Bedrock's inputTokens as input_tokens");

  once({ kind: 'json', status: 400, body: { message: 'The provided model does not support counting tokens.' }, errorType: 'ValidationException' });
  const refused = await viaRelay(relay, '/vendor-b/v1/messages/count_tokens', s.relayKey, body, { 'anthropic-version': '2023-06-01' });
  t.equal(refused.status, 400);
  t.same(JSON.parse(refused.text), { type: 'error', error: { type: 'invalid_request_error', message: 'The provided model does not support counting tokens.' } });
});

t.test('a Responses stream on Bedrock (ConverseStream) cut by the client: the prompt is counted by CountTokens, signed', async (t) => {
  const s = await seedBedrock();
  // ConverseStream reports usage only in its last event (metadata), which the client never waits for.
  const events = converseAnswer('one two three four five six seven eight').events;
  once({ kind: 'events', messages: [...events.slice(0, 3), ...Array.from({ length: 30 }, () => events[2]!), ...events.slice(3)], delayMs: 40 });
  const before = bedrock.requests.length;
  const turn = { model: s.modelSlug, stream: true, instructions: 'You are Codex.', input: 'fix the bug', tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } }] };
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/responses', s.relayKey, turn, (x) => x.includes('response.output_text.delta'));
  const record = await usageRecord(relay, requestId);
  const sent = bedrock.requests.slice(before);
  t.same(sent.map((r) => r.operation), ['converse-stream', 'count-tokens'], 'the turn, then its count');
  const converse = (sent[1]!.body.input as { converse: Record<string, unknown> }).converse;
  t.same(Object.keys(converse).sort(), ['messages', 'system', 'toolConfig'], 'what CountTokens takes of the Converse request');
  t.same(converse.messages, sent[0]!.body.messages, 'the messages as they were sent');
  t.equal(sent[1]!.principal, KEY.accessKeyId, 'signed with the host key');
  t.match(record, { client_aborted: true, upstream_shape: 'bedrock.converse', input_tokens: Math.ceil(JSON.stringify(converse).length / 4) });
  t.equal(record.extras.usage_counted, 'input');
});

t.test('a provider narrowed to bedrock.converse: a cut stream is not counted (CountTokens serves only some models), but estimated', async (t) => {
  const s = await seedBedrock({ shapes: ['bedrock.converse'] });
  const events = converseAnswer('one two three four five six').events;
  once({ kind: 'events', messages: [...events.slice(0, 3), ...Array.from({ length: 30 }, () => events[2]!), ...events.slice(3)], delayMs: 40 });
  const before = bedrock.requests.length;
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug, true), (x) => x.split('\n\n').length > 3);
  const record = await usageRecord(relay, requestId);
  t.same(bedrock.requests.slice(before).map((r) => r.operation), ['converse-stream']);
  t.match(record, { client_aborted: true, input_tokens: 1 });
  t.equal(record.extras.usage_estimated, 'input,output');
});

t.test('a provider narrowed to bedrock.converse (models other than Claude): Messages clients are translated through Converse', async (t) => {
  const s = await seedBedrock({ shapes: ['bedrock.converse'] });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug, true), { 'anthropic-version': '2023-06-01' });
  t.equal(res.status, 200, res.text);
  t.equal(anthropicText(res.text), 'Hello from Bedrock');
  t.equal(bedrock.requests.at(-1)!.operation, 'converse-stream');
  const usage = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(usage.upstream_shape, 'bedrock.converse');
  const count = await viaRelay(relay, '/vendor-b/v1/messages/count_tokens', s.relayKey, { model: s.modelSlug, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(count.status, 404, 'count_tokens is not served where the provider speaks only Converse');
});

t.test('a gzip-compressed error (a proxy in front of Bedrock) reaches the caller decoded, passed through and translated', async (t) => {
  const s = await seedBedrock();
  const compressed = () => once({
    kind: 'raw', status: 400, contentType: 'application/json', body: gzipSync(JSON.stringify({ message: 'The model input is malformed: messages.0 is empty.' })),
    headers: { 'content-encoding': 'gzip', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
  });
  compressed();
  const passed = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug));
  t.equal(passed.status, 400, passed.text);
  t.match(passed.text, /The model input is malformed/, 'the Messages client reads the message (not compressed bytes taken for text)');
  compressed();
  const translated = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(translated.status, 400, translated.text);
  t.match(JSON.parse(translated.text).error.message, /The model input is malformed/, 'and the Chat client, translated');
  // The exception named in the body only (no x-amzn-errortype): read from the decoded body.
  once({
    kind: 'raw', status: 429, contentType: 'application/json', headers: { 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify({ __type: 'com.amazon.coral.availability#ThrottlingException', message: 'Too many tokens, please wait before trying again.' })),
  });
  const throttled = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, messages(s.modelSlug));
  t.equal(throttled.status, 429, throttled.text);
  t.same(JSON.parse(throttled.text), { type: 'error', error: { type: 'rate_limit_error', message: 'Too many tokens, please wait before trying again.' } }, "the Messages client gets Anthropic's error for the exception in the compressed body");
});
