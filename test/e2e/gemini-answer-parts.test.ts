// Gemini answer parts beyond text and function calls, over real HTTP through Relay to a fake Gemini
// API (issue 44 item 3: mapped or named, never dropped in silence): an image (inlineData) reaches a
// canonical client as an image part and is named `image` in x-relay-dropped for Chat, Responses and
// Messages clients, whose answers have no place for it; in a stream no event carries an image, so it
// is named in the header when it came before the first output, else in an x-relay-dropped trailer;
// audio is named `inlineData`; executableCode and codeExecutionResult reach every client as fenced text.
// And a document in assistant history is refused for a Responses upstream (input_file is user input only).
import t from 'tap';
import http from 'node:http';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeGoogle } from '../support/fake-google.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, settled } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const API_KEY = 'AIza-fake-parts-key';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const CODE = '```python\nprint(6 * 7)\n```';
const OUTPUT = '```output\n42\n```';

const google = await startFakeGoogle({ apiKey: API_KEY, usage: { promptTokenCount: 12, candidatesTokenCount: 30 } });
const openaiUp = await startFakeUpstream();
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }] });
t.teardown(async () => { await relay.close(); await google.close(); await openaiUp.close(); });

const gemini = await seedRoute(relay, { baseUrl: `${google.url}/v1beta`, adapter: 'google', model: 'gemini-image', upstreamModel: 'gemini-2.5-flash-image', hostKeys: [API_KEY] });
const responsesOnly = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'parts-responses', shapes: ['openai.responses'] });
await routeLive(relay, gemini);
await settled(relay, (s) => s.relayKeys.has(responsesOnly.relayKeyId));

/** Text, then an image, then code Gemini ran and what it printed (each its own SSE frame when streamed). */
const TEXT_IMAGE_CODE = [
  { text: 'Here is the cat you asked for.' },
  { inlineData: { mimeType: 'image/png', data: PNG } },
  { executableCode: { language: 'PYTHON', code: 'print(6 * 7)' } },
  { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '42\n' } },
];

interface Answer { status: number; headers: http.IncomingHttpHeaders; trailers: NodeJS.Dict<string>; body: string }

/** A POST read with node:http, which exposes trailers (fetch does not). */
function post(path: string, key: string, body: unknown, anthropic = false): Promise<Answer> {
  const url = new URL(`${relay.inferenceUrl}${path}`);
  const auth = anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...auth } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const CLIENTS = {
  chat: (stream: boolean) => post('/vendor-a/v1/chat/completions', gemini.relayKey, {
    model: 'gemini-image', stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: 'user', content: 'Draw a cat, then compute 6*7.' }],
  }),
  responses: (stream: boolean) => post('/vendor-a/v1/responses', gemini.relayKey, { model: 'gemini-image', stream, store: !stream ? false : undefined, input: 'Draw a cat, then compute 6*7.' }),
  messages: (stream: boolean) => post('/vendor-b/v1/messages', gemini.relayKey, {
    model: 'gemini-image', stream, max_tokens: 500, messages: [{ role: 'user', content: 'Draw a cat, then compute 6*7.' }],
  }, true),
};

/** The text a client read, from its JSON answer or its stream. */
function textOf(client: keyof typeof CLIENTS, answer: Answer, stream: boolean): string {
  if (!stream) {
    const json = JSON.parse(answer.body);
    if (client === 'chat') return json.choices[0].message.content;
    if (client === 'responses') return json.output.flatMap((i: any) => (i.type === 'message' ? i.content.map((c: any) => c.text) : [])).join('\n\n');
    return json.content.filter((b: any) => b.type === 'text').map((b: any) => b.text).join('\n\n');
  }
  const frames = sseFrames(answer.body).map((f) => (f.data === '[DONE]' ? null : JSON.parse(f.data))).filter((d) => d !== null);
  if (client === 'chat') return frames.map((d: any) => d.choices?.[0]?.delta?.content ?? '').join('');
  if (client === 'responses') return frames.filter((d: any) => d.type === 'response.output_text.delta').map((d: any) => d.delta).join('');
  return frames.filter((d: any) => d.type === 'content_block_delta' && d.delta.type === 'text_delta').map((d: any) => d.delta.text).join('');
}

for (const client of Object.keys(CLIENTS) as Array<keyof typeof CLIENTS>) {
  t.test(`${client}: a Gemini answer with an image and code execution`, async (t) => {
    google.setAnswerParts(TEXT_IMAGE_CODE);
    const whole = await CLIENTS[client](false);
    t.equal(whole.status, 200, whole.body.slice(0, 300));
    t.equal(whole.headers['x-relay-dropped'], 'image', 'the image its shape cannot carry is named');
    const text = textOf(client, whole, false);
    t.match(text, 'Here is the cat you asked for.');
    t.ok(text.indexOf(CODE) > text.indexOf('cat you asked') && text.indexOf(OUTPUT) > text.indexOf(CODE), `the code, then its output, as fenced text: ${JSON.stringify(text)}`);
    t.notMatch(whole.body, PNG, 'no image bytes in a shape without a place for them');

    google.setAnswerParts(TEXT_IMAGE_CODE, 200);
    const streamed = await CLIENTS[client](true);
    t.equal(streamed.status, 200, streamed.body.slice(0, 300));
    t.equal(streamed.headers['x-relay-dropped'], undefined, 'the head went with the first text, before the image came');
    t.equal(streamed.trailers['x-relay-dropped'], 'image', 'the image is named in the trailer');
    const streamedText = textOf(client, streamed, true);
    t.ok(streamedText.includes(CODE) && streamedText.includes(OUTPUT), `streamed: the code and its output: ${JSON.stringify(streamedText)}`);
    t.ok(streamedText.startsWith('Here is the cat you asked for.'), 'the text first');
  });
}

t.test('a streamed answer whose image comes first names it in the header, and no trailer', async (t) => {
  google.setAnswerParts([{ inlineData: { mimeType: 'image/png', data: PNG } }, { text: 'A cat.' }], 30);
  const res = await CLIENTS.chat(true);
  t.equal(res.status, 200);
  t.equal(res.headers['x-relay-dropped'], 'image');
  t.equal(res.trailers['x-relay-dropped'], undefined);
  t.equal(textOf('chat', res, true), 'A cat.');
});

t.test('canonical client: the image arrives as an image part; streamed, it is named', async (t) => {
  google.setAnswerParts(TEXT_IMAGE_CODE);
  const request = { model: 'gemini-image', messages: [{ role: 'user', content: [{ type: 'text', text: 'Draw a cat.' }] }] };
  const whole = await post('/v1/generate', gemini.relayKey, request);
  t.equal(whole.status, 200, whole.body.slice(0, 300));
  t.equal(whole.headers['x-relay-dropped'], undefined, 'nothing dropped');
  const content = JSON.parse(whole.body).content;
  t.match(content, [
    { type: 'text', text: 'Here is the cat you asked for.' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    { type: 'text', text: CODE },
    { type: 'text', text: OUTPUT },
  ]);
  google.setAnswerParts(TEXT_IMAGE_CODE, 200);
  const streamed = await post('/v1/generate', gemini.relayKey, { ...request, stream: true });
  t.equal(streamed.status, 200);
  t.equal(streamed.trailers['x-relay-dropped'], 'image', 'no stream event carries an image');
});

t.test('audio (a TTS answer) is named inlineData; a failed run says so before its output', async (t) => {
  google.setAnswerParts([
    { inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: 'AAAAAA==' } },
    { executableCode: { language: 'PYTHON', code: '1/0' } },
    { codeExecutionResult: { outcome: 'OUTCOME_FAILED', output: 'ZeroDivisionError: division by zero' } },
  ]);
  const res = await CLIENTS.messages(false);
  t.equal(res.status, 200, res.body.slice(0, 300));
  t.equal(res.headers['x-relay-dropped'], 'inlineData');
  t.match(textOf('messages', res, false), /Code execution ended with OUTCOME_FAILED:\n```output\nZeroDivisionError: division by zero\n```/);
});

t.test('a document in assistant history to a Responses upstream: a 400 in the client\'s shape naming the part and the model', async (t) => {
  google.setAnswerParts(null);
  const before = openaiUp.count;
  const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } };
  const messages = await post('/vendor-b/v1/messages', responsesOnly.relayKey, {
    model: 'parts-responses', max_tokens: 50, messages: [
      { role: 'user', content: 'Write me a report.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Here it is.' }, pdf] },
      { role: 'user', content: 'Shorten it.' },
    ],
  }, true);
  t.equal(messages.status, 400, messages.body);
  t.match(JSON.parse(messages.body), { type: 'error', error: { type: 'invalid_request_error', message: /parts-responses.*a document in an assistant message/ } });
  const canonical = await post('/v1/generate', responsesOnly.relayKey, {
    model: 'parts-responses', messages: [
      { role: 'user', content: [{ type: 'text', text: 'Write me a report.' }] },
      { role: 'assistant', content: [pdf] },
      { role: 'user', content: [{ type: 'text', text: 'Shorten it.' }] },
    ],
  });
  t.equal(canonical.status, 400);
  t.match(JSON.parse(canonical.body), { error: { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /a document in an assistant message/ } });
  t.equal(openaiUp.count, before, 'the upstream saw neither');
  const inUser = await post('/vendor-b/v1/messages', responsesOnly.relayKey, { model: 'parts-responses', max_tokens: 50, messages: [{ role: 'user', content: [pdf, { type: 'text', text: 'Sum it up.' }] }] }, true);
  t.equal(inUser.status, 200, 'a document in a user turn goes as input_file');
  t.match(openaiUp.lastRequest()!.json.input[0].content, [{ type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' }]);
});
