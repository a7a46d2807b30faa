// The Gemini codec on its own (no Relay): canonical -> generateContent request, answers and
// SSE frames -> canonical, errors, usage; and the adapter's send against the fake upstream.
import t from 'tap';
import type { CanonicalRequest, StreamEvent } from 'relay-gateway/canonical';
import type { Route } from 'relay-gateway';
import { createTestUpstreamClient } from 'relay-gateway/testing';
import { createGeminiAdapter, endpointFor } from '../adapter.ts';
import { GEMINI_REQUEST_DROPPED, decodeGeminiError, decodeGeminiResponse, encodeGeminiRequest, geminiStreamDecoder, usageFromGemini } from '../codec/index.ts';
import { startFakeGemini } from './fake-gemini.ts';

const route = (upstreamModel = 'gemini-2.5-flash', baseUrl = 'http://127.0.0.1:1/v1beta'): Route =>
  ({ upstreamModel, host: { spec: { baseUrl, timeoutMs: 5_000 } } }) as unknown as Route;

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
    max_output_tokens: 100, temperature: 0.2, top_p: 0.9, stop: ['a', 'b', 'c', 'd', 'e', 'f'],
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
    { type: 'error', error: { code: 'RELAY_ERR_RATE_LIMITED', status: 429, message: 'Quota exceeded' } },
  ]);
});

t.test('errors keep the message and map the status', async (t) => {
  t.match(decodeGeminiError(429, JSON.stringify({ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } })), { code: 'RELAY_ERR_RATE_LIMITED', message: 'Resource has been exhausted' });
  t.match(decodeGeminiError(503, JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })), { code: 'RELAY_ERR_UPSTREAM_UNREACHABLE' });
  t.match(decodeGeminiError(404, JSON.stringify({ error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } })), { code: 'RELAY_ERR_NOT_FOUND' });
  t.match(decodeGeminiError(500, 'upstream connect error'), { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: 'upstream connect error' });
});

t.test('send: the model in the URL, the key in x-goog-api-key, a refused key reported as 401', async (t) => {
  const fake = await startFakeGemini({ apiKey: 'good-key', text: 'ok' });
  t.teardown(() => fake.close());
  t.equal(endpointFor('https://generativelanguage.googleapis.com/v1beta/', 'models/gemini-2.5-pro', true),
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  const adapter = createGeminiAdapter({ id: 'gemini', schemaDialect: 'json-schema' });
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

async function readText(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
