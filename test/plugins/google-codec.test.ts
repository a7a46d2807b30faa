// The vendor-google codec on its own (no Relay): canonical -> generateContent request, answers
// and SSE frames -> canonical, errors, usage; and the adapters' send against the fake Google
// upstream: the Gemini API's key, Vertex AI's OAuth tokens (a service-account key exchanged at a
// token endpoint that verifies the assertion's signature), Claude on Vertex's rawPredict body.
import t from 'tap';
import type { CanonicalRequest, StreamEvent } from '../../core/plugin-api/canonical.ts';
import type { Route } from '../../core/plugin-api.ts';
import { createTestUpstreamClient } from '../../core/testing.ts';
import { VertexTokens } from '../../plugins/vendor-google/access-token.ts';
import { createGoogleAdapter } from '../../plugins/vendor-google/adapter.ts';
import { geminiApiUrl, vertexUrl } from '../../plugins/vendor-google/endpoints.ts';
import { createVertexAnthropicAdapter } from '../../plugins/vendor-google/vertex-anthropic.ts';
import { GEMINI_REQUEST_DROPPED, decodeGeminiError, decodeGeminiResponse, encodeGeminiRequest, geminiStreamDecoder, usageFromGemini } from '../../plugins/vendor-google/codec/index.ts';
import { serviceAccountKey, startFakeGoogle } from '../support/fake-google.ts';

const route = (upstreamModel = 'gemini-2.5-flash', baseUrl = 'http://127.0.0.1:1/v1beta', options?: Record<string, unknown>): Route =>
  ({ upstreamModel, host: { metadata: { slug: 'google-host' }, spec: { baseUrl, timeoutMs: 5_000, ...(options ? { options } : {}) } } }) as unknown as Route;

t.test('request: system, roles, tools, tool results by name, generation config', async (t) => {
  const request: CanonicalRequest = {
    model: 'm',
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'And kind.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      { role: 'assistant', content: [
        { type: 'reasoning', origin: 'gemini', signature: 'sig-1' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] }] },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false } }],
    tool_choice: { type: 'tool', name: 'get_weather' },
    max_output_tokens: 100, temperature: 0.2, top_p: 0.9, stop: ['a', 'b', 'c', 'd', 'e'],
    reasoning: { effort: 'low', summary: true },
    response_format: { type: 'json_schema', name: 'w', schema: { type: 'object', additionalProperties: false } },
  };
  const body = encodeGeminiRequest(request, 'json-schema') as any;
  t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }, { text: 'And kind.' }] });
  t.same(body.contents, [
    { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
  ]);
  t.same(body.tools, [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: request.tools![0]!.type === 'function' ? request.tools![0]!.parameters : null }] }]);
  t.same(body.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
  t.same(body.generationConfig, {
    maxOutputTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['a', 'b', 'c', 'd', 'e'],
    responseMimeType: 'application/json', responseJsonSchema: { type: 'object', additionalProperties: false },
    thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
  });

  const openapi = encodeGeminiRequest(request, 'openapi') as any;
  t.same(openapi.tools[0].functionDeclarations[0].parameters, { type: 'object', properties: { city: { type: 'string' } } }, 'OpenAPI subset: unknown keywords removed');
  t.same(openapi.generationConfig.responseSchema, { type: 'object' });
  t.same((encodeGeminiRequest({ model: 'm', messages: [], reasoning: { effort: 'none' } }, 'json-schema') as any).generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
  t.throws(() => encodeGeminiRequest({ ...request, stop: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'json-schema'),
    { status: 400, field: 'stop', message: /at most 5 stop sequences \(6 were sent\)/ }, 'a sixth stop sequence is refused, not dropped');
  t.ok(Object.keys(GEMINI_REQUEST_DROPPED).length >= 10, 'every dropped field says why');
});

t.test('response: text, thoughts, signatures, function calls, usage, finish reasons', async (t) => {
  const r = route();
  const plain: CanonicalRequest = { model: 'm', messages: [] };
  const res = decodeGeminiResponse({
    responseId: 'r1', modelVersion: 'gemini-2.5-flash-001',
    candidates: [{ content: { role: 'model', parts: [
      { text: 'thinking...', thought: true },
      { text: 'Here.', thoughtSignature: 'sig' },
      { functionCall: { name: 'f', args: { a: 1 } } },
    ] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4 },
  }, r, plain);
  t.equal(res.id, 'r1');
  t.equal(res.model, 'gemini-2.5-flash-001');
  t.match(res.content, [
    { type: 'reasoning', origin: 'gemini', text: 'thinking...' },
    { type: 'reasoning', origin: 'gemini', signature: 'sig' },
    { type: 'text', text: 'Here.' },
    { type: 'tool_call', name: 'f', arguments: '{"a":1}', tool_kind: 'function' },
  ]);
  t.equal(res.stop_reason, 'tool_use', 'STOP with a function call');
  t.same(res.usage, { input_tokens: 10, output_tokens: 8, cache_read_tokens: 4, cache_write_tokens: 0, reasoning_tokens: 3 });
  t.equal(decodeGeminiResponse({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'MAX_TOKENS' }] }, r, plain).stop_reason, 'max_tokens');
  t.equal(decodeGeminiResponse({ candidates: [{ finishReason: 'SAFETY' }] }, r, plain).stop_reason, 'content_filter');
  t.equal(decodeGeminiResponse({ promptFeedback: { blockReason: 'SAFETY' } }, r, plain).stop_reason, 'content_filter');
  t.throws(() => decodeGeminiResponse({}, r, plain), /no candidate/);
  t.equal(usageFromGemini(undefined), null);

  const withPatch: CanonicalRequest = { model: 'm', messages: [], tools: [{ type: 'custom', name: 'apply_patch' }] };
  t.same((encodeGeminiRequest(withPatch, 'json-schema') as any).tools[0].functionDeclarations[0].parametersJsonSchema.required, ['input'], 'a custom tool is a function with one string parameter');
  t.match(decodeGeminiResponse({ candidates: [{ content: { parts: [{ functionCall: { name: 'apply_patch', args: { input: '*** Begin Patch' } } }] }, finishReason: 'STOP' }] }, r, withPatch).content,
    [{ type: 'tool_call', name: 'apply_patch', arguments: '*** Begin Patch', tool_kind: 'custom' }], 'and its call comes back as the raw text');
});

t.test('stream: text continues one part, function calls arrive whole, end on finishReason', async (t) => {
  const decoder = geminiStreamDecoder(route(), { model: 'm', messages: [] });
  const events: StreamEvent[] = [];
  const frame = (parts: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ responseId: 's1', candidates: [{ content: { role: 'model', parts }, ...extra }] });
  events.push(...decoder.decode(undefined, frame([{ text: 'Hel' }])));
  events.push(...decoder.decode(undefined, frame([{ text: 'lo' }])));
  events.push(...decoder.decode(undefined, frame([{ functionCall: { name: 'f', args: { x: 1 } }, thoughtSignature: 'sig' }])));
  events.push(...decoder.decode(undefined, JSON.stringify({
    candidates: [{ content: { parts: [{ text: '' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3 },
  })));
  events.push(...decoder.decode(undefined, frame([{ text: 'ignored' }])));
  events.push(...decoder.finish());
  t.match(events, [
    { type: 'start', id: 's1' },
    { type: 'part_start', index: 0, part: { type: 'text' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'Hel' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'lo' } },
    { type: 'part_end', index: 0 },
    { type: 'part_start', index: 1, part: { type: 'reasoning', origin: 'gemini' } },
    { type: 'delta', index: 1, delta: { type: 'signature', signature: 'sig' } },
    { type: 'part_end', index: 1 },
    { type: 'part_start', index: 2, part: { type: 'tool_call', name: 'f' } },
    { type: 'delta', index: 2, delta: { type: 'arguments', text: '{"x":1}' } },
    { type: 'part_end', index: 2 },
    { type: 'end', stop_reason: 'tool_use', usage: { input_tokens: 2, output_tokens: 3 } },
  ]);
  t.equal(events.length, 12, 'nothing after the end');

  const cut = geminiStreamDecoder(route(), { model: 'm', messages: [] });
  cut.decode(undefined, frame([{ text: 'Hi' }]));
  t.match(cut.finish(), [{ type: 'part_end', index: 0 }, { type: 'error', error: { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE' } }], 'a body that ends without finishReason');

  const failing = geminiStreamDecoder(route(), { model: 'm', messages: [] });
  t.match(failing.decode(undefined, JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded' } })), [
    { type: 'error', error: { code: 'RELAY_ERR_UPSTREAM_RATE_LIMITED', status: 429, message: 'Quota exceeded' } },
  ]);
});

t.test('stream: a code execution part is a text part of its own; an image is named, and its signature kept', async (t) => {
  const dropped: string[] = [];
  const decoder = geminiStreamDecoder(route(), { model: 'm', messages: [] }, dropped);
  const frame = (parts: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ responseId: 's2', candidates: [{ content: { role: 'model', parts }, ...extra }] });
  const events = [
    ...decoder.decode(undefined, frame([{ text: 'Let me run it.' }])),
    ...decoder.decode(undefined, frame([{ executableCode: { language: 'PYTHON', code: 'print("```")' } }])),
    ...decoder.decode(undefined, frame([{ codeExecutionResult: { outcome: 'OUTCOME_DEADLINE_EXCEEDED' } }])),
    ...decoder.decode(undefined, frame([{ inlineData: { mimeType: 'image/png', data: 'AAAA' }, thoughtSignature: 'sig-img' }])),
    ...decoder.decode(undefined, frame([{ text: 'Done.' }], { finishReason: 'STOP' })),
  ];
  const texts = events.filter((e): e is Extract<StreamEvent, { type: 'delta' }> => e.type === 'delta' && e.delta.type === 'text');
  t.same(texts.map((e) => [e.index, (e.delta as { text: string }).text]), [
    [0, 'Let me run it.'],
    [1, '````python\nprint("```")\n````'],
    [2, 'Code execution ended with OUTCOME_DEADLINE_EXCEEDED.'],
    [4, 'Done.'],
  ], 'the fence outgrows the backticks in the code; the text after a code part opens a new part');
  t.match(events.find((e) => e.type === 'delta' && e.delta.type === 'signature'), { index: 3, delta: { signature: 'sig-img' } }, 'the image\'s signature is kept');
  t.same(dropped, ['image']);

  const around = geminiStreamDecoder(route(), { model: 'm', messages: [] }, []);
  const split = [
    ...around.decode(undefined, frame([{ text: 'Before.' }])),
    ...around.decode(undefined, frame([{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }])),
    ...around.decode(undefined, frame([{ text: 'After.' }], { finishReason: 'STOP' })),
  ];
  t.same(split.filter((e) => e.type === 'part_start').map((e) => e.index), [0, 1], 'the text on either side of an image stays two parts');
});

t.test('errors keep the message and map the status', async (t) => {
  t.match(decodeGeminiError(429, JSON.stringify({ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } })), { code: 'RELAY_ERR_UPSTREAM_RATE_LIMITED', message: 'Resource has been exhausted' });
  t.match(decodeGeminiError(503, JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })), { code: 'RELAY_ERR_UPSTREAM_UNREACHABLE' });
  t.match(decodeGeminiError(404, JSON.stringify({ error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } })), { code: 'RELAY_ERR_NOT_FOUND' });
  t.match(decodeGeminiError(500, 'upstream connect error'), { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: 'upstream connect error' });
});

t.test('send: the model in the URL, the key in x-goog-api-key, a refused key reported as 401', async (t) => {
  const fake = await startFakeGoogle({ apiKey: 'good-key', text: 'ok' });
  t.teardown(() => fake.close());
  t.equal(geminiApiUrl('https://generativelanguage.googleapis.com/v1beta/', 'models/gemini-2.5-pro', true),
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  const adapter = createGoogleAdapter({ id: 'google', schemaDialect: 'json-schema', tokens: new VertexTokens(), workloadIdentity: false });
  const r = route('gemini-2.5-flash', `${fake.url}/v1beta`);
  const hi: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const body = JSON.stringify(encodeGeminiRequest(hi, 'json-schema'));
  const client = createTestUpstreamClient();
  t.teardown(() => client.close());
  const call = (credential: string) => adapter.send({ route: r, shape: 'gemini.generate', body, headers: {}, credential, stream: false, signal: AbortSignal.timeout(5_000), client });

  const ok = await call('good-key');
  t.equal(ok.status, 200);
  t.equal(adapter.decodeResponse('gemini.generate', JSON.parse(await readText(ok.body)), r, hi).content[0]?.type, 'text');
  t.equal(fake.requests[0]!.headers['x-goog-api-key'], 'good-key');

  const refused = await call('bad-key');
  t.equal(refused.status, 401, "Google's 400 API_KEY_INVALID becomes 401, so the key is marked invalid and Relay fails over");
  t.match(adapter.decodeError('gemini.generate', 401, await readText(refused.body)), { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: /API key not valid/ });
});

t.test('Vertex URLs: the project, location, publisher and method', async (t) => {
  const vertex = { mode: 'vertex' as const, project: 'acme-prod', location: 'europe-west4' };
  t.equal(vertexUrl('https://europe-west4-aiplatform.googleapis.com/v1', vertex, 'google', 'publishers/google/models/gemini-2.5-pro', true),
    'https://europe-west4-aiplatform.googleapis.com/v1/projects/acme-prod/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  t.equal(vertexUrl('https://aiplatform.googleapis.com/v1/', { ...vertex, location: 'global' }, 'anthropic', 'claude-sonnet-4-5@20250929', false),
    'https://aiplatform.googleapis.com/v1/projects/acme-prod/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
});

t.test('Vertex send: a service-account token, cached, refreshed when Vertex refuses it', async (t) => {
  const account = serviceAccountKey();
  const forged = serviceAccountKey(account.clientEmail); // the same account, a key Google does not know
  const fake = await startFakeGoogle({ serviceAccounts: [account], text: 'from vertex' });
  t.teardown(() => fake.close());
  const options = { mode: 'vertex', project: 'acme', location: 'us-central1', tokenUrl: `${fake.url}/token` };
  const tokens = new VertexTokens();
  const adapter = createGoogleAdapter({ id: 'google', schemaDialect: 'json-schema', tokens, workloadIdentity: false });
  const r = route('gemini-2.5-pro', `${fake.url}/v1`, options);
  const hi: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const body = JSON.stringify(encodeGeminiRequest(hi, 'json-schema'));
  const client = createTestUpstreamClient();
  t.teardown(() => client.close());
  const call = (credential: string) => adapter.send({ route: r, shape: 'gemini.generate', body, headers: {}, credential, stream: false, signal: AbortSignal.timeout(10_000), client });

  const first = await call(account.json);
  t.equal(first.status, 200, await readText(first.body));
  t.equal(fake.requests[0]!.path, '/v1/projects/acme/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent');
  t.match(fake.requests[0]!.headers.authorization, /^Bearer ya29\.fake-/);
  t.notOk(fake.requests[0]!.headers['x-goog-api-key'], 'no API key on Vertex');
  t.same(fake.tokenRequests, [{ accepted: true, iss: account.clientEmail }], 'one token, for a verified assertion');

  t.equal((await call(account.json)).status, 200);
  t.equal(fake.tokenRequests.length, 1, 'the token is cached');

  fake.expireTokens();
  const refreshed = await call(account.json);
  t.equal(refreshed.status, 200, 'Vertex refused the expired token; a new one was fetched and the request sent again');
  t.equal(fake.tokenRequests.length, 2);
  t.equal(fake.requests.at(-2)!.headers.authorization !== fake.requests.at(-1)!.headers.authorization, true, 'with the new token');

  const refused = await call(forged.json);
  t.equal(refused.status, 401, 'an assertion Google cannot verify: the host key is refused (the pipeline fails over)');
  const error = adapter.decodeError('gemini.generate', 401, await readText(refused.body));
  t.match(error, { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: /token endpoint refused the service account.*invalid_grant.*Invalid JWT Signature/ });
  t.notMatch(error.message, /PRIVATE KEY/, 'the key is never in the message');

  const notJson = await call('AIza-not-a-service-account');
  t.equal(notJson.status, 401);
  t.match(await readText(notJson.body), /not a service-account JSON key/);
  t.notMatch(await readText((await call('{"type":"authorized_user","client_id":"x"}')).body), /client_id/, 'the credential is not echoed');
});

t.test('Claude on Vertex: rawPredict with anthropic_version, the model in the URL, usage and errors', async (t) => {
  const account = serviceAccountKey();
  const fake = await startFakeGoogle({ serviceAccounts: [account], text: 'claude on vertex', usage: { promptTokenCount: 12, candidatesTokenCount: 4, cachedContentTokenCount: 3 } });
  t.teardown(() => fake.close());
  const adapter = createVertexAnthropicAdapter('vertex-anthropic', new VertexTokens(), false);
  const r = route('claude-sonnet-4-5@20250929', `${fake.url}/v1`, { mode: 'vertex', project: 'acme', location: 'us-east5', tokenUrl: `${fake.url}/token` });
  const client = createTestUpstreamClient();
  t.teardown(() => client.close());
  const body = JSON.stringify({ model: 'claude-sonnet-4-5@20250929', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
  const res = await adapter.send({ route: r, shape: 'anthropic.messages', body, headers: { 'anthropic-beta': 'x' }, credential: account.json, stream: false, signal: AbortSignal.timeout(10_000), client });
  const json = JSON.parse(await readText(res.body));
  t.equal(res.status, 200, JSON.stringify(json));
  const sent = fake.requests.at(-1)!;
  t.equal(sent.path, '/v1/projects/acme/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
  t.same(sent.json, { anthropic_version: 'vertex-2023-10-16', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(sent.headers['anthropic-beta'], 'x', 'client headers are forwarded');
  t.same(adapter.usageFromBody('anthropic.messages', json), { input_tokens: 15, output_tokens: 4, cache_read_tokens: 3, cache_write_tokens: 0, reasoning_tokens: 0, model: 'claude-sonnet-4-5@20250929' });
  t.equal(adapter.translationShape(['anthropic.messages'], 'openai.chat'), null, 'other client shapes are not routed here');

  const counted = await adapter.send({ route: r, shape: 'anthropic.count_tokens', body, headers: {}, credential: account.json, stream: false, signal: AbortSignal.timeout(10_000), client });
  t.same(JSON.parse(await readText(counted.body)), { input_tokens: 21 });
  t.match(fake.requests.at(-1)!, { path: /\/publishers\/anthropic\/models\/count-tokens:rawPredict$/, json: { model: 'claude-sonnet-4-5@20250929' } });

  t.match(adapter.decodeError('anthropic.messages', 429, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } })), { code: 'RELAY_ERR_UPSTREAM_RATE_LIMITED', message: 'slow down' });
  t.match(adapter.decodeError('anthropic.messages', 403, JSON.stringify({ error: { code: 403, message: 'Permission denied on resource project acme.', status: 'PERMISSION_DENIED' } })), { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: /Permission denied/ });
});

async function readText(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

t.test('host options: workload identity only when the plugin allows it', async (t) => {
  const { firstProblem } = await import('../../core/http/validate.ts');
  const { googleHostOptions } = await import('../../plugins/vendor-google/host-options.ts');
  const ambient = { mode: 'vertex', project: 'acme', location: 'us-central1', auth: 'workload-identity' };
  t.match(firstProblem(googleHostOptions(false), ambient), { pointer: '/auth' });
  t.equal(firstProblem(googleHostOptions(true), ambient), null);
  t.equal(firstProblem(googleHostOptions(false), {}), null, 'the Gemini API needs no options');
});

t.test('Vertex tokens: refreshed before they expire; an unreachable token endpoint is a network failure', async (t) => {
  const { refusingUrl } = await import('../support/fake-upstream.ts');
  const account = serviceAccountKey();
  // 60 s tokens are inside the library's 5-minute refresh margin: each call fetches a fresh one.
  const fake = await startFakeGoogle({ serviceAccounts: [account], tokenLifetimeS: 60 });
  t.teardown(() => fake.close());
  const client = createTestUpstreamClient();
  t.teardown(() => client.close());
  const hi: CanonicalRequest = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const body = JSON.stringify(encodeGeminiRequest(hi, 'json-schema'));
  const send = (tokenUrl: string) => {
    const adapter = createGoogleAdapter({ id: 'google', schemaDialect: 'json-schema', tokens, workloadIdentity: false });
    const r = route('gemini-2.5-pro', `${fake.url}/v1`, { mode: 'vertex', project: 'acme', location: 'us-central1', tokenUrl });
    return adapter.send({ route: r, shape: 'gemini.generate', body, headers: {}, credential: account.json, stream: false, signal: AbortSignal.timeout(10_000), client });
  };
  const tokens = new VertexTokens();
  t.equal((await send(`${fake.url}/token`)).status, 200);
  t.equal((await send(`${fake.url}/token`)).status, 200);
  t.equal(fake.tokenRequests.filter((r) => r.accepted).length, 2, 'a token near its expiry is replaced before it is used');
  await t.rejects(send(await refusingUrl()), 'no answer from the token endpoint: send rejects, so the pipeline fails over as for any unreachable upstream');
});

t.test('a host stored with workload identity is refused once the option is off', async (t) => {
  const tokens = new VertexTokens(false);
  const result = await tokens.token('unused', { mode: 'vertex', project: 'acme', location: 'us-central1', auth: 'workload-identity' });
  t.same(result, { ok: false, message: 'workload identity is off (the vendor-google option workloadIdentity)' });
});
