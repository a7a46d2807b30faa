// What a misbehaving upstream does to a translated answer, answered by a scripted HTTP server: a
// value of the wrong type is never Relay's 500, a stream closed before its end event is recorded
// as broken, an upstream's 429 is not recorded as Relay's own rate limit, bytes that are not an
// event stream are a bad answer, not an unreachable upstream, and a frame that is not JSON ends
// the stream with an error rather than leaving a hole in the answer.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { routeLive, settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { converseAnswer, encodeMessage, encodeStream, type StreamMessage } from '../support/fake-bedrock.ts';

interface Scripted { status?: number; headers: Record<string, string>; body: string | Buffer }

/** An upstream that answers every request with the next scripted answer, whatever its path. */
async function scriptedUpstream(): Promise<{ url: string; next: (answer: Scripted) => void; close(): Promise<void> }> {
  let answer: Scripted = { status: 500, headers: { 'content-type': 'application/json' }, body: '{}' };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status ?? 200, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: (a) => { answer = a; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }, { use: 'vendor-bedrock' }] });
const up = await scriptedUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

type Vendor = 'anthropic' | 'openai-chat' | 'openai-responses' | 'google' | 'bedrock';
const routes = new Map<Vendor, Seeded>();
for (const vendor of ['anthropic', 'openai-chat', 'openai-responses', 'google', 'bedrock'] as const) {
  const model = `hostile-${vendor}`;
  const seeded = vendor === 'google'
    ? await seedRoute(relay, { baseUrl: `${up.url}/v1beta`, adapter: 'google', model, upstreamModel: 'models/gemini-2.5-flash' })
    : vendor === 'bedrock'
      ? await seedRoute(relay, {
        baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com', adapter: 'bedrock', model, upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
        hostKeys: ['AKIAHOSTILE000000001:hostile/Secret+Key0123456789abcdefghijk'], hostOptions: { region: 'us-west-2', endpoint: up.url },
      })
      : await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: vendor === 'anthropic' ? 'anthropic' : 'openai', model, shapes: vendor === 'anthropic' ? undefined : [vendor === 'openai-chat' ? 'openai.chat' : 'openai.responses'] });
  await routeLive(relay, seeded);
  routes.set(vendor, seeded);
}
await settled(relay, (s) => [...routes.values()].every((r) => s.relayKeys.has(r.relayKeyId)));

const CLIENTS = {
  chat: (model: string, stream: boolean) => ['/vendor-a/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], stream }] as const,
  responses: (model: string, stream: boolean) => ['/vendor-a/v1/responses', { model, input: 'hi', stream, store: false }] as const,
  messages: (model: string, stream: boolean) => ['/vendor-b/v1/messages', { model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream }] as const,
};

async function ask(vendor: Vendor, client: keyof typeof CLIENTS, stream: boolean, answer: Scripted) {
  const seeded = routes.get(vendor)!;
  up.next(answer);
  const [path, body] = CLIENTS[client](seeded.modelSlug, stream);
  const res = await viaRelay(relay, path, seeded.relayKey, body);
  return { res, record: await usageRecord(relay, res.headers.get('x-request-id')!) };
}

const sse = (frames: Array<[string | null, unknown]>): Scripted => ({
  headers: { 'content-type': 'text/event-stream' },
  body: frames.map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`).join(''),
});
const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Scripted => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const eventStream = (body: Buffer): Scripted => ({ headers: { 'content-type': 'application/vnd.amazon.eventstream' }, body });

const messageStart = (message: Record<string, unknown> = {}): [string, unknown] => ['message_start', {
  type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], usage: { input_tokens: 10, output_tokens: 1 }, ...message },
}];
const textBlock: Array<[string, unknown]> = [
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
];
const messageEnd: Array<[string, unknown]> = [
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }],
  ['message_stop', { type: 'message_stop' }],
];
const geminiAnswer = (extra: Record<string, unknown>) => ({
  candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 }, ...extra,
});

t.test('an id or model of the wrong type is read as absent: the client gets its answer, not a 500', async (t) => {
  const cases: Array<[Vendor, keyof typeof CLIENTS, boolean, Scripted]> = [
    ['anthropic', 'responses', true, sse([messageStart({ id: 12345 }), ...textBlock, ...messageEnd])],
    ['anthropic', 'chat', true, sse([messageStart({ id: { x: 1 }, model: 7 }), ...textBlock, ...messageEnd])],
    ['openai-responses', 'messages', true, sse([
      ['response.created', { type: 'response.created', response: { id: 99, model: ['m'] } }],
      ['response.output_text.delta', { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'hi' }],
      ['response.completed', { type: 'response.completed', response: { status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 2 } } }],
    ])],
    ['google', 'chat', false, json(geminiAnswer({ responseId: 5, modelVersion: 6 }))],
    ['google', 'responses', true, sse([[null, geminiAnswer({ responseId: 5 })]])],
  ];
  for (const [vendor, client, stream, answer] of cases) {
    const { res, record } = await ask(vendor, client, stream, answer);
    const label = `${vendor} -> ${client}${stream ? ', streamed' : ''}`;
    t.equal(res.status, 200, `${label}: ${res.text.slice(0, 200)}`);
    t.match(res.text, /Hello|hi/, `${label}: the text reached the client`);
    t.equal(record.error_code, null, `${label}: recorded as answered`);
  }
});

t.test('a translated stream the upstream closes before its end event is recorded as broken, with the usage it reported', async (t) => {
  const converse = converseAnswer('Hello there').events;
  const cases: Array<[Vendor, keyof typeof CLIENTS, Scripted]> = [
    ['anthropic', 'responses', sse([messageStart(), ...textBlock, messageEnd[0]!])],
    ['openai-chat', 'messages', sse([[null, { id: 'c', choices: [{ index: 0, delta: { content: 'hi' } }] }]])],
    ['google', 'messages', sse([[null, { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } }]])],
    ['bedrock', 'chat', eventStream(encodeStream(converse.slice(0, 3)))],
  ];
  for (const [vendor, client, answer] of cases) {
    const { res, record } = await ask(vendor, client, true, answer);
    t.equal(res.status, 200, `${vendor} -> ${client}: the stream had begun`);
    t.match(res.text, /ended before|response\.failed|"error"/, `${vendor} -> ${client}: the client is told the answer broke`);
    t.equal(record.error_code, 'upstream_stream_error', `${vendor} -> ${client}: and so is the record`);
  }
  const { record } = await ask('anthropic', 'responses', true, sse([messageStart(), ...textBlock, messageEnd[0]!]));
  t.equal(record.input_tokens, 10, 'the input the upstream reported is kept');
});

t.test('bytes that are not an event stream are a bad answer (502), not an unreachable upstream', async (t) => {
  const corrupt = (m: StreamMessage): Buffer => {
    const bytes = Buffer.from(encodeMessage(m));
    bytes[bytes.length - 6]! ^= 0xff; // inside the payload: the message CRC no longer matches
    return bytes;
  };
  const cases: Array<[string, Scripted]> = [
    ['a CRC mismatch', eventStream(corrupt(converseAnswer('x').events[0]!))],
    ['a JSON body', json({ message: 'oops' })],
  ];
  for (const [what, answer] of cases) {
    const { res, record } = await ask('bedrock', 'chat', true, answer);
    t.equal(res.status, 502, what);
    t.match(JSON.parse(res.text), { error: { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: /event stream could not be read/ } }, `${what}: named as such`);
    t.equal(record.error_code, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', `${what}: and recorded as such`);
  }
});

t.test('a frame that is not JSON mid-stream ends the translated stream with an error, not an answer with a hole', async (t) => {
  const hole = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" LOST';
  const chatDelta = (text: string): [null, unknown] => [null, { id: 'c', choices: [{ index: 0, delta: { content: text } }] }];
  const geminiText = (text: string): [null, unknown] => [null, { candidates: [{ content: { role: 'model', parts: [{ text }] } }] }];
  const cases: Array<[Vendor, keyof typeof CLIENTS, Scripted]> = [
    ['anthropic', 'chat', sse([messageStart(), textBlock[0]!, textBlock[1]!, ['content_block_delta', hole], ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' AFTER' } }], ...textBlock.slice(2), ...messageEnd])],
    ['openai-chat', 'messages', sse([chatDelta('Hello'), [null, '{"id":"c","choices":[{"index":0,"delta":{"content":" LOST'], chatDelta(' AFTER'), [null, { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }], [null, '[DONE]']])],
    ['openai-responses', 'chat', sse([
      ['response.output_text.delta', { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello' }],
      ['response.output_text.delta', '{"type":"response.output_text.delta","delta":" LOST'],
      ['response.output_text.delta', { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: ' AFTER' }],
      ['response.completed', { type: 'response.completed', response: { status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 2 } } }],
    ])],
    ['google', 'messages', sse([geminiText('Hello'), [null, '{"candidates":[{"content":{"parts":[{"text":" LOST'], geminiText(' AFTER'), [null, geminiAnswer({})]])],
  ];
  for (const [vendor, client, answer] of cases) {
    const { res, record } = await ask(vendor, client, true, answer);
    t.equal(res.status, 200, `${vendor} -> ${client}: the stream had begun`);
    t.match(res.text, /Hello/, `${vendor} -> ${client}: the output before the frame`);
    t.match(res.text, /the upstream sent a frame Relay could not read/, `${vendor} -> ${client}: an error event says so`);
    t.notMatch(res.text, /AFTER/, `${vendor} -> ${client}: the stream ends there`);
    t.equal(record.error_code, 'upstream_stream_error', `${vendor} -> ${client}: recorded as broken`);
  }
});

t.test('an answer nested 100,000 deep is a 502 that says so; the process serves the next request', async (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const body = (text: string): Scripted => ({ headers: { 'content-type': 'application/json' }, body: text });
  const cases: Array<[Vendor, keyof typeof CLIENTS, Scripted]> = [
    ['anthropic', 'chat', body(`{"id":"msg_1","type":"message","role":"assistant","model":"c","content":[{"type":"tool_use","id":"t","name":"f","input":${deep}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`)],
    ['openai-chat', 'messages', body(`{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":${deep}}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)],
    ['google', 'responses', body(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${deep}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}`)],
  ];
  for (const [vendor, client, answer] of cases) {
    const { res, record } = await ask(vendor, client, false, answer);
    t.equal(res.status, 502, `${vendor} -> ${client}`);
    t.match(res.text, /could not be (read|translated): it is nested too deeply to read/, `${vendor} -> ${client}: says why`);
    t.equal(record.error_code, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', `${vendor} -> ${client}: recorded as a bad answer`);
  }
  const { res } = await ask('google', 'chat', false, json(geminiAnswer({})));
  t.equal(res.status, 200, 'and the next request is answered');
});

t.test("an answer that is not JSON is a 502 that quotes none of its bytes (they were never scrubbed)", async (t) => {
  const quoted = 'AKIAHOSTILE000000001:hostile/Secret+Key0123456789abcdefghijk';
  const { res, record } = await ask('openai-chat', 'messages', false, { headers: { 'content-type': 'application/json' }, body: `${quoted} and then some` });
  t.equal(res.status, 502);
  t.match(res.text, /could not be read: it is not valid JSON/, 'says why');
  t.notMatch(res.text, 'AKIAHOST', 'and quotes nothing of the answer');
  t.equal(record.error_code, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE');
});

t.test('a streamed answer in a framing that is not an event stream (NDJSON) is a 502 naming its content type', async (t) => {
  const { res, record } = await ask('openai-chat', 'messages', true, { headers: { 'content-type': 'application/x-ndjson' }, body: '{"message":{"content":"Hel"}}\n{"done":true}\n' });
  t.equal(res.status, 502);
  t.match(res.text, /could not be read: it is not valid JSON \(asked to stream, it answered with content-type \\"application\/x-ndjson\\", not text\/event-stream, so it was read as one JSON body\)/);
  t.equal(record.error_code, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE');
});

t.test('frames that say nothing (a blank data line, [DONE]) are skipped on every translated stream', async (t) => {
  const { res, record } = await ask('openai-responses', 'messages', true, sse([
    [null, ''],
    ['response.output_text.delta', { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello' }],
    ['response.completed', { type: 'response.completed', response: { status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 2 } } }],
    [null, '[DONE]'],
  ]));
  t.equal(res.status, 200);
  t.match(res.text, /message_stop/, 'the answer ends as it should');
  t.notMatch(res.text, /could not read/);
  t.equal(record.error_code, null);
});

// Last: the key then cools for the upstream's retry-after.
t.test("an upstream's 429 on a translated route is the upstream's rate limit, not Relay's", async (t) => {
  const limited = json({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } }, 429, { 'retry-after': '3' });
  const { res, record } = await ask('anthropic', 'chat', false, limited);
  t.equal(res.status, 429);
  t.match(JSON.parse(res.text), { error: { message: /per-minute rate limit/ } }, "the upstream's words");
  t.equal(record.error_code, 'RELAY_ERR_UPSTREAM_RATE_LIMITED');
});
