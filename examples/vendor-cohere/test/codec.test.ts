// The Cohere codec on its own (no Relay): canonical -> v2 chat request, answers and stream
// events -> canonical, errors, usage; and the adapter's send against the fake upstream.
import t from 'tap';
import type { CanonicalRequest, StreamEvent } from 'relay-gateway/canonical';
import type { Route } from 'relay-gateway';
import { createTestUpstreamClient } from 'relay-gateway/testing';
import { createCohereAdapter } from '../adapter.ts';
import { COHERE_REQUEST_DROPPED, cohereStreamDecoder, decodeCohereError, decodeCohereResponse, encodeCohereRequest, usageFromCohere } from '../codec/index.ts';
import { startFakeCohere } from './fake-cohere.ts';

const route = (upstreamModel = 'command-a-03-2025', baseUrl = 'http://127.0.0.1:1/v2'): Route =>
  ({ upstreamModel, host: { spec: { baseUrl, timeoutMs: 5_000 } } }) as unknown as Route;
const plain: CanonicalRequest = { model: 'm', messages: [] };

t.test('request: system first, images, tool calls and results, tool choice, generation settings', async (t) => {
  const request: CanonicalRequest = {
    model: 'command-a-03-2025',
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'And kind.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      { role: 'assistant', content: [
        { type: 'reasoning', origin: 'cohere', text: 'I will look it up.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] }, { type: 'text', text: 'Thanks.' }] },
    ],
    tools: [
      { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      { type: 'function', name: 'other' },
    ],
    tool_choice: { type: 'tool', name: 'get_weather' },
    max_output_tokens: 100, temperature: 1.4, top_p: 1, stop: ['END'],
    reasoning: { budget_tokens: 2048 },
    response_format: { type: 'json_schema', name: 'w', schema: { type: 'object' } },
    stream: true,
  };
  t.same(encodeCohereRequest(request), {
    model: 'command-a-03-2025',
    messages: [
      { role: 'system', content: 'Be brief.\n\nAnd kind.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      { role: 'user', content: 'Thanks.' },
    ],
    tool_choice: 'REQUIRED',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    max_tokens: 100, temperature: 1, p: 0.99, stop_sequences: ['END'],
    response_format: { type: 'json_object', json_schema: { type: 'object' } },
    thinking: { type: 'enabled', token_budget: 2048 },
    stream: true,
  });
  t.same(encodeCohereRequest({ model: 'm', messages: [], reasoning: { effort: 'none' } }).thinking, { type: 'disabled' });
  t.equal(encodeCohereRequest({ model: 'm', messages: [], tools: [{ type: 'function', name: 'f' }], tool_choice: 'none' }).tool_choice, 'NONE');
  t.ok(Object.keys(COHERE_REQUEST_DROPPED).length >= 10, 'every dropped field says why');
});

t.test('response: text, tool plan, tool calls, finish reasons, usage', async (t) => {
  const res = decodeCohereResponse({
    id: 'r1', finish_reason: 'TOOL_CALL',
    message: { role: 'assistant', tool_plan: 'I will call f.', tool_calls: [{ id: 'f_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    usage: { billed_units: { input_tokens: 8, output_tokens: 5 }, tokens: { input_tokens: 10, output_tokens: 5 }, cached_tokens: 4 },
  }, route(), plain);
  t.same(res.content, [{ type: 'reasoning', origin: 'cohere', text: 'I will call f.' }, { type: 'tool_call', id: 'f_1', name: 'f', arguments: '{"a":1}', tool_kind: 'function' }]);
  t.equal(res.stop_reason, 'tool_use');
  t.same(res.usage, { input_tokens: 10, output_tokens: 5, cache_read_tokens: 4, cache_write_tokens: 0, reasoning_tokens: 0 });
  t.equal(decodeCohereResponse({ message: { content: [{ type: 'text', text: 'x' }] }, finish_reason: 'MAX_TOKENS' }, route(), plain).stop_reason, 'max_tokens');
  t.equal(decodeCohereResponse({ message: { content: [{ type: 'text', text: 'x' }] }, finish_reason: 'STOP_SEQUENCE' }, route(), plain).stop_reason, 'stop_sequence');
  t.same(usageFromCohere({ billed_units: { input_tokens: 3, output_tokens: 2 } }), { input_tokens: 3, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 }, 'billed units when tokens are absent');
  t.throws(() => decodeCohereResponse({}, route(), plain), /no message/);
});

t.test('stream: text, a tool plan and a call with streamed arguments, end on message-end', async (t) => {
  const decoder = cohereStreamDecoder(route(), plain);
  const frames = [
    { type: 'message-start', id: 's1' },
    { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
    { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hel' } } } },
    { type: 'content-delta', index: 0, delta: { message: { content: { text: 'lo' } } } },
    { type: 'content-end', index: 0 },
    { type: 'tool-plan-delta', delta: { message: { tool_plan: 'Calling f.' } } },
    { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: 'f_1', type: 'function', function: { name: 'f', arguments: '' } } } } },
    { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '{"x":' } } } } },
    { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '1}' } } } } },
    { type: 'tool-call-end', index: 0 },
    { type: 'message-end', delta: { finish_reason: 'TOOL_CALL', usage: { tokens: { input_tokens: 2, output_tokens: 3 } } } },
  ];
  const events: StreamEvent[] = [...frames.flatMap((f) => decoder.decode(f.type, JSON.stringify(f))), ...decoder.finish()];
  t.match(events, [
    { type: 'start', id: 's1' },
    { type: 'part_start', index: 0, part: { type: 'text' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'Hel' } },
    { type: 'delta', index: 0, delta: { type: 'text', text: 'lo' } },
    { type: 'part_end', index: 0 },
    { type: 'part_start', index: 1, part: { type: 'reasoning', origin: 'cohere' } },
    { type: 'delta', index: 1, delta: { type: 'reasoning', text: 'Calling f.' } },
    { type: 'part_end', index: 1 },
    { type: 'part_start', index: 2, part: { type: 'tool_call', id: 'f_1', name: 'f' } },
    { type: 'delta', index: 2, delta: { type: 'arguments', text: '{"x":' } },
    { type: 'delta', index: 2, delta: { type: 'arguments', text: '1}' } },
    { type: 'part_end', index: 2 },
    { type: 'end', stop_reason: 'tool_use', usage: { input_tokens: 2, output_tokens: 3 } },
  ]);
  t.equal(events.length, 13);
  const cut = cohereStreamDecoder(route(), plain);
  cut.decode(undefined, JSON.stringify(frames[1]));
  t.match(cut.finish(), [{ type: 'part_end', index: 0 }, { type: 'error', error: { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE' } }], 'a body that ends before message-end');
});

t.test('stream: a frame that says nothing is skipped, one that is not JSON throws (the stream ends with an error, not a hole)', async (t) => {
  const decoder = cohereStreamDecoder(route(), plain);
  t.same(decoder.decode(undefined, ''), []);
  t.same(decoder.decode(undefined, '[DONE]'), []);
  t.throws(() => decoder.decode('content-delta', '{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hel'));
});

t.test('errors keep the message and map the status', async (t) => {
  t.match(decodeCohereError(429, JSON.stringify({ message: 'trial key rate limited' })), { code: 'RELAY_ERR_UPSTREAM_RATE_LIMITED', message: 'trial key rate limited' });
  t.match(decodeCohereError(401, JSON.stringify({ id: 'x', message: 'invalid api token' })), { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', status: 502 });
  t.match(decodeCohereError(400, JSON.stringify({ message: 'invalid request: messages must not be empty' })), { code: 'RELAY_ERR_BAD_REQUEST', status: 400 });
  t.match(decodeCohereError(500, 'upstream connect error'), { message: 'upstream connect error' });
});

t.test('send: POST /v2/chat with the key as a bearer token', async (t) => {
  const fake = await startFakeCohere({ apiKey: 'co-good', text: 'ok' });
  t.teardown(() => fake.close());
  const adapter = createCohereAdapter('cohere');
  const r = route('command-a-03-2025', `${fake.url}/v2`);
  const hi: CanonicalRequest = { model: 'command-a-03-2025', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  const client = createTestUpstreamClient();
  t.teardown(() => client.close());
  const call = (credential: string) => adapter.send({
    route: r, shape: 'cohere.chat', body: JSON.stringify(adapter.encodeRequest('cohere.chat', hi, r)), headers: {}, credential, stream: false, signal: AbortSignal.timeout(5_000), client,
  });
  const ok = await call('co-good');
  t.equal(ok.status, 200);
  t.equal(adapter.decodeResponse('cohere.chat', JSON.parse(await readText(ok.body)), r, hi).content[0]?.type, 'text');
  t.equal(fake.requests[0]!.headers.authorization, 'Bearer co-good');
  const refused = await call('co-bad');
  t.equal(refused.status, 401);
  t.match(adapter.decodeError('cohere.chat', 401, await readText(refused.body)), { message: 'invalid api token' });
});

async function readText(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
