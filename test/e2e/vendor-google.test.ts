// vendor-google end to end: Relay with the built-in plugin, a fake Google upstream over real
// HTTP and SSE (the Gemini API, Vertex AI, and a token endpoint that verifies the service
// account's signed assertion), the official OpenAI and Anthropic SDKs as clients.
//   - Gemini API: OpenAI Chat (streamed), Anthropic Messages (JSON and streamed), a tool round trip, errors
//   - Vertex AI Gemini: a service-account key held as a sealed host key; its token cached, and
//     refreshed when Vertex refuses an expired one
//   - Claude on Vertex: passed through to Messages clients (rawPredict, streamRawPredict)
//   - host options checked on write (a 400 naming the option); failover from Anthropic to Vertex
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { serviceAccountKey, startFakeGoogle } from '../support/fake-google.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { hostKeyHealth, readThenAbort, routeLive, setBindingWeights, settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const TEXT = 'Gemini says hello through Relay.';
const API_KEY = 'AIza-fake-host-key';
const account = serviceAccountKey();

const google = await startFakeGoogle({
  apiKey: API_KEY, serviceAccounts: [account], text: TEXT, chunks: 5,
  usage: { promptTokenCount: 11, candidatesTokenCount: 6, thoughtsTokenCount: 4, cachedContentTokenCount: 3 },
  functionCall: { name: 'get_weather', args: { city: 'Paris' } },
});
const anthropicUp = await startFakeUpstream({ text: 'from anthropic' });
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }] });
t.teardown(async () => {
  await relay.close();
  await google.close();
  await anthropicUp.close();
});

const vertexOptions = { mode: 'vertex', project: 'acme-prod', location: 'us-central1', tokenUrl: `${google.url}/token` };
const geminiApi = await seedRoute(relay, {
  baseUrl: `${google.url}/v1beta`, adapter: 'google', model: 'gemini-flash', upstreamModel: 'models/gemini-2.5-flash', hostKeys: [API_KEY],
});
const vertexGemini = await seedRoute(relay, {
  baseUrl: `${google.url}/v1`, adapter: 'google', model: 'gemini-vertex', upstreamModel: 'gemini-2.5-pro', hostKeys: [account.json], hostOptions: vertexOptions,
});
const vertexClaude = await seedRoute(relay, {
  baseUrl: `${google.url}/v1`, adapter: 'vertex-anthropic', model: 'claude-vertex', upstreamModel: 'claude-sonnet-4-5@20250929',
  hostKeys: [account.json], hostOptions: { ...vertexOptions, location: 'us-east5' },
});
for (const seeded of [geminiApi, vertexGemini, vertexClaude]) await routeLive(relay, seeded);

const openaiFor = (key: string) => new OpenAI({ apiKey: key, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropicFor = (key: string) => new Anthropic({ apiKey: key, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const lastGoogle = () => google.requests[google.requests.length - 1]!;

t.test('the built-in plugin registers both adapters', async (t) => {
  const loaded = relay.relay.plugins.find((p) => p.plugin.name === 'vendor-google');
  t.equal(loaded?.source, 'builtin');
  t.ok(relay.relay.hooks.adapters.get('google'));
  t.ok(relay.relay.hooks.adapters.get('vertex-anthropic'));
});

t.test('host options are checked on write: a 400 naming the option', async (t) => {
  const host = (providerId: string, options: unknown) => relay.api('POST', '/api/hosts', {
    metadata: { displayName: `bad ${Math.random()}` }, spec: { providerId, baseUrl: 'https://aiplatform.googleapis.com/v1', options },
  });
  const missing = await host(vertexGemini.providerId, { mode: 'vertex', project: 'acme' });
  t.equal(missing.status, 400);
  t.match(missing.body.error, { field: '/spec/options/location', message: /location.*required/ });
  const wrongMode = await host(vertexGemini.providerId, { mode: 'cloud' });
  t.equal(wrongMode.status, 400);
  t.equal(wrongMode.body.error.field, '/spec/options/mode', 'a mode no variant has is what is wrong');
  const badProject = await host(vertexGemini.providerId, { mode: 'vertex', project: 'Acme Prod!', location: 'us-central1' });
  t.match(badProject.body.error, { field: '/spec/options/project' });
  const claudeWithoutVertex = await host(vertexClaude.providerId, {});
  t.equal(claudeWithoutVertex.status, 400, 'Claude on Vertex needs the Vertex options');
  t.match(claudeWithoutVertex.body.error.field, /^\/spec\/options/);
  const ambient = await host(vertexGemini.providerId, { mode: 'vertex', project: 'acme', location: 'us-central1', auth: 'workload-identity' });
  t.equal(ambient.status, 400, "the machine's own Google credentials only when the config allows them (plugin option workloadIdentity)");
  t.match(ambient.body.error, { field: '/spec/options/auth' });
  const unknown = await host(vertexGemini.providerId, { mode: 'vertex', project: 'acme', location: 'us-central1', region: 'x' });
  t.match(unknown.body.error, { field: '/spec/options/region', message: /unknown field/ });
});

t.test('Gemini API: a streamed OpenAI chat completion', async (t) => {
  const openai = openaiFor(geminiApi.relayKey);
  const { data: stream, response } = await openai.chat.completions.create({
    model: 'gemini-flash', stream: true, stream_options: { include_usage: true }, max_tokens: 200, temperature: 0.5,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }],
  }).withResponse();
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    usage = chunk.usage ?? usage;
  }
  t.equal(text, TEXT, 'the text of every SSE frame, in order');
  t.equal(finish, 'stop');
  t.equal(usage?.prompt_tokens, 11);
  t.equal(usage?.completion_tokens, 10, 'candidates + thoughts');
  const sent = lastGoogle();
  t.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  t.equal(sent.query.get('alt'), 'sse');
  t.equal(sent.headers['x-goog-api-key'], API_KEY, 'the host key, in x-goog-api-key');
  t.notOk(sent.headers.authorization, 'the relay key does not go upstream');
  t.same(sent.json.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  t.same(sent.json.generationConfig, { maxOutputTokens: 200, temperature: 0.5 });
  const record = await usageRecord(relay, response.headers.get('x-request-id')!);
  t.match(record, { status: 200, upstream_shape: 'gemini.generate', inbound_shape: 'openai.chat', input_tokens: 11, output_tokens: 10, reasoning_tokens: 4, cache_read_tokens: 3 });
});

t.test('Gemini API: Anthropic Messages, JSON and streamed', async (t) => {
  const anthropic = anthropicFor(geminiApi.relayKey);
  const message = await anthropic.messages.create({ model: 'gemini-flash', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] });
  t.equal(message.content[0]?.type === 'text' ? message.content[0].text : null, TEXT);
  t.equal(message.stop_reason, 'end_turn');
  t.equal(lastGoogle().method, 'generateContent');
  const final = await anthropic.messages.stream({ model: 'gemini-flash', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }).finalMessage();
  t.equal(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), TEXT, 'the SDK stream helper accepts the event sequence');
  t.equal(final.usage.output_tokens, 10);
});

t.test('Gemini API: a translated stream cut by the client keeps the prompt its frames reported', async (t) => {
  // Every frame carries usageMetadata (cumulative); the client leaves long before the last.
  google.setAnswerParts(Array.from({ length: 30 }, (_, i) => ({ text: `word${i} ` })), 40);
  t.teardown(() => google.setAnswerParts(null));
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', geminiApi.relayKey,
    { model: 'gemini-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('\n\n').length > 3);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, upstream_shape: 'gemini.generate', input_tokens: 11 });
});

t.test('Gemini API: a tool call round trip, functionCall out, functionResponse back by name', async (t) => {
  const openai = openaiFor(geminiApi.relayKey);
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await openai.chat.completions.create({ model: 'gemini-flash', messages, tools });
  const call = first.choices[0]!.message.tool_calls?.[0];
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  t.same(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), { city: 'Paris' });
  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: '{"temperature": 21}' });
  const second = await openai.chat.completions.create({ model: 'gemini-flash', messages, tools });
  t.equal(second.choices[0]!.message.content, TEXT);
  const contents = lastGoogle().json.contents;
  t.same(contents[1], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] });
  t.same(contents[2], { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }] });
});

t.test('Gemini API: a wrong API key (400 API_KEY_INVALID) marks the host key invalid, also when a proxy compressed the answer', async (t) => {
  for (const compressed of [false, true]) {
    const wrongKey = `AIza-wrong-key-${compressed ? 'gzip' : 'plain'}`;
    const seeded = await seedRoute(relay, { baseUrl: `${google.url}/v1beta`, adapter: 'google', model: `gemini-wrong-${compressed}`, upstreamModel: 'models/gemini-2.5-flash', hostKeys: [wrongKey] });
    await routeLive(relay, seeded);
    google.compressErrors(compressed);
    const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: seeded.modelSlug, messages: [{ role: 'user', content: 'hi' }] });
    google.compressErrors(false);
    t.equal(res.status, 502, `${compressed ? 'gzip' : 'plain'}: the host refused its key, not the caller's request (${res.text})`);
    t.notMatch(res.text, new RegExp(wrongKey), 'the host key is not echoed');
    t.equal((await hostKeyHealth(relay)).get(seeded.hostKeyIds[0]!)?.state, 'invalid', `${compressed ? 'gzip' : 'plain'}: the key is marked invalid`);
  }
});

t.test("Gemini API: an error reaches the client in the client's shape", async (t) => {
  google.enqueue({ status: 400, body: google.error(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.') });
  const err = await openaiFor(geminiApi.relayKey).chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.BadRequestError, 'a typed 400 in the OpenAI SDK');
  t.match((err as Error).message, /Request contains an invalid argument/);
});

t.test('Vertex AI Gemini: a service-account token, cached, refreshed when Vertex refuses it', async (t) => {
  const openai = openaiFor(vertexGemini.relayKey);
  const tokensBefore = google.tokenRequests.length;
  const stream = await openai.responses.create({ model: 'gemini-vertex', input: 'Say hello.', stream: true });
  let text = '';
  for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
  t.equal(text, TEXT, 'a Responses client (Codex\'s shape) served by Gemini on Vertex');
  const sent = lastGoogle();
  t.equal(sent.path, '/v1/projects/acme-prod/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent');
  t.match(sent.headers.authorization, /^Bearer ya29\.fake-/, 'an OAuth token, not the key');
  t.equal(google.tokenRequests.length, tokensBefore + 1);
  t.same(google.tokenRequests.at(-1), { accepted: true, iss: account.clientEmail }, "the token endpoint verified the assertion's signature");

  const again = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(again.choices[0]!.message.content, TEXT);
  t.equal(google.tokenRequests.length, tokensBefore + 1, 'the token is cached');

  google.expireTokens();
  const afterExpiry = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(afterExpiry.choices[0]!.message.content, TEXT, 'Vertex refused the expired token; Relay fetched a new one and sent again');
  t.equal(google.tokenRequests.length, tokensBefore + 2);

  const keys = await relay.api('GET', `/api/host-keys/${vertexGemini.hostKeyIds[0]}`);
  t.notMatch(JSON.stringify(keys.body), /PRIVATE KEY/, 'the service-account key is write-only');
});

t.test('Claude on Vertex: passed through to Messages clients', async (t) => {
  const anthropic = anthropicFor(vertexClaude.relayKey);
  const { data: message, response } = await anthropic.messages.create({ model: 'claude-vertex', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }).withResponse();
  t.equal(message.content[0]?.type === 'text' ? message.content[0].text : null, TEXT);
  const sent = lastGoogle();
  t.equal(sent.path, '/v1/projects/acme-prod/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
  t.equal(sent.json.anthropic_version, 'vertex-2023-10-16');
  t.notOk('model' in sent.json, 'the model is in the URL, not the body');
  const record = await usageRecord(relay, response.headers.get('x-request-id')!);
  t.match(record, { status: 200, inbound_shape: 'anthropic.messages', upstream_shape: 'anthropic.messages', input_tokens: 14, output_tokens: 6, cache_read_tokens: 3 });

  const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
  const stream = anthropic.messages.stream({ model: 'claude-vertex', max_tokens: 64, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  const final = await stream.finalMessage();
  t.equal(lastGoogle().method, 'streamRawPredict');
  t.equal(final.stop_reason, 'tool_use');
  t.match(final.content[0], { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });

  const other = await openaiFor(vertexClaude.relayKey).chat.completions.create({ model: 'claude-vertex', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(other instanceof OpenAI.APIError && other.status !== undefined && other.status >= 400 && other.status < 500, 'an OpenAI client gets a 4xx, not a 500');
});

t.test('failover before the first byte: a model bound to Anthropic and to Claude on Vertex', async (t) => {
  const direct = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-both', upstreamModel: 'claude-sonnet-4-5' });
  const viaVertex = await seedRoute(relay, {
    baseUrl: `${google.url}/v1`, adapter: 'vertex-anthropic', model: 'claude-both', upstreamModel: 'claude-sonnet-4-5@20250929',
    hostKeys: [account.json], hostOptions: vertexOptions,
  });
  await setBindingWeights(relay, direct.modelId, { [direct.hostId]: 1000, [viaVertex.hostId]: 1 });
  await routeLive(relay, viaVertex);
  await settled(relay, (s) => s.hostKeysOfHost(direct.hostId).length > 0 && s.relayKeys.has(viaVertex.relayKeyId));
  anthropicUp.enqueue(faults.serverError({ vendor: 'anthropic', status: 529 }));
  const { data: stream, response } = await anthropicFor(viaVertex.relayKey).messages.create({
    model: 'claude-both', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello.' }],
  }).withResponse();
  let text = '';
  for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  t.equal(text, TEXT, 'Anthropic was overloaded; Claude on Vertex answered');
  t.equal(anthropicUp.requests.length, 1, 'Anthropic was tried first');
  const record = await usageRecord(relay, response.headers.get('x-request-id')!);
  t.match(record, { status: 200, attempts: 2, host_id: viaVertex.hostId });
});
