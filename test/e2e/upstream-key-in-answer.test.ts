// An upstream that quotes Relay's host key in an answer that has begun (an error event mid-stream,
// a 200 whose body is an error), whole in one read or split between two: the caller never gets
// the key, passed through or translated. A passed-through answer keeps its length and every
// other byte; a placeholder key ("ollama", shorter than a real secret) is not masked out of answers.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { routeLive, usageRecord, viaRelay } from '../support/relay-client.ts';

/** Each answer: pieces written apart (made from the key the request carried), and its content type. */
type Answer = { type: string; pieces: (key: string) => string[]; length?: boolean };
let answer: Answer = { type: 'application/json', pieces: () => ['{}'] };
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const key = String(req.headers['x-api-key'] ?? req.headers.authorization ?? '').replace(/^Bearer /, '');
    const pieces = answer.pieces(key);
    const length = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
    res.writeHead(200, { 'content-type': answer.type, ...(answer.length ? { 'content-length': String(length) } : {}) });
    // Apart in time, so they arrive in separate reads.
    const next = (i: number): void => {
      if (i === pieces.length) return void res.end();
      res.write(pieces[i]);
      setTimeout(() => next(i + 1), 30);
    };
    next(0);
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const relay = await startRelay();
t.teardown(async () => {
  await relay.close();
  await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
});

const HOST_KEY = 'sk-quoted/host+key-0123456789abcdef';
const openai = await seedRoute(relay, { baseUrl: url, adapter: 'openai', model: 'quoting-gpt', hostKeys: [HOST_KEY], shapes: ['openai.chat'] });
const anthropic = await seedRoute(relay, { baseUrl: url, adapter: 'anthropic', model: 'quoting-claude', hostKeys: [HOST_KEY] });
const placeholder = await seedRoute(relay, { baseUrl: url, adapter: 'openai', model: 'local-gpt', hostKeys: ['ollama'], shapes: ['openai.chat'] });
for (const r of [openai, anthropic, placeholder]) await routeLive(relay, r);

const chat = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string, stream: boolean) => ({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

const chatChunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** An OpenAI stream that begins, then reports an error quoting `key`, cut `at` bytes into the key. */
function chatStream(at: number): Answer {
  return {
    type: 'text/event-stream',
    pieces: (key) => {
      const error = `data: {"error":{"message":"key ${key} was revoked; ${key.replaceAll('/', '\\/')}","type":"invalid_request_error"}}\n\n`;
      const cut = error.indexOf(key) + at;
      return [chatChunk({ role: 'assistant', content: 'Hel' }), error.slice(0, cut), error.slice(cut)];
    },
  };
}
/** An Anthropic stream that begins, then sends an error event quoting `key`, cut `at` bytes into it. */
function messagesStream(at: number): Answer {
  return {
    type: 'text/event-stream',
    pieces: (key) => {
      const error = `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"key ${key} is over its quota"}}\n\n`;
      const cut = error.indexOf(key) + at;
      return [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
        + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
        error.slice(0, cut), error.slice(cut),
      ];
    },
  };
}

/** The key is in neither the bytes nor what a JSON reader decodes of each frame. */
function holdsKey(text: string, key: string): boolean {
  return text.includes(key) || text.replaceAll('\\/', '/').includes(key);
}

for (const at of [0, 1, 12, HOST_KEY.length - 1]) {
  const split = at === 0 ? 'in one read' : `split ${at} bytes into the key`;
  t.test(`passed-through streams, the key ${split}: masked, every other byte as sent`, async (t) => {
    for (const [what, path, route, body, stream] of [
      ['Chat', '/vendor-a/v1/chat/completions', openai, chat, chatStream(at)],
      ['Messages', '/vendor-b/v1/messages', anthropic, messages, messagesStream(at)],
    ] as const) {
      answer = stream;
      // stream_options asked by the client: Relay hides no frame, so the bytes compare whole.
      const got = await viaRelay(relay, path, route.relayKey, { ...body(route.modelSlug, true), ...(what === 'Chat' ? { stream_options: { include_usage: true } } : {}) });
      const sent = stream.pieces(HOST_KEY).join('');
      t.equal(got.status, 200, what);
      t.notOk(holdsKey(got.text, HOST_KEY), `${what}: no host key`);
      t.match(got.text, /\[redacted host key\]\**/, `${what}: a mask where it was`);
      t.equal(got.bytes.length, Buffer.byteLength(sent), `${what}: as many bytes as sent`);
      const mask = (s: string) => s.replaceAll(/\[redacted host key\]\**/g, 'K');
      t.equal(mask(got.text), mask(sent.replaceAll(HOST_KEY.replaceAll('/', '\\/'), 'K').replaceAll(HOST_KEY, 'K')), `${what}: the rest unchanged`);
    }
  });

  t.test(`translated streams, the key ${split}: not in the caller's error event`, async (t) => {
    for (const [what, path, route, body, stream] of [
      ['Messages -> OpenAI', '/vendor-b/v1/messages', openai, messages, chatStream(at)],
      ['Chat -> Anthropic', '/vendor-a/v1/chat/completions', anthropic, chat, messagesStream(at)],
    ] as const) {
      answer = stream;
      const got = await viaRelay(relay, path, route.relayKey, body(route.modelSlug, true));
      t.equal(got.status, 200, what);
      t.notOk(holdsKey(got.text, HOST_KEY), `${what}: no host key`);
      t.match(got.text, /key \[redacted host key\]\**/, `${what}: the upstream's words, masked`);
      const record = await usageRecord(relay, got.headers.get('x-request-id')!);
      t.equal(record.error_code, 'upstream_stream_error', `${what}: recorded as the broken stream it is`);
    }
  });
}

t.test('a 200 whose body is an error quoting the key: masked, its Content-Length still true', async (t) => {
  answer = { type: 'application/json', length: true, pieces: (key) => [`{"error":{"message":"Incorrect API key provided: ${key.slice(0, 10)}`, `${key.slice(10)}"}}`] };
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', openai.relayKey, chat(openai.modelSlug, false));
  t.equal(got.status, 200);
  t.notOk(holdsKey(got.text, HOST_KEY));
  t.equal(JSON.parse(got.text).error.message, `Incorrect API key provided: ${'[redacted host key]'.padEnd(HOST_KEY.length, '*')}`);
  t.equal(got.headers.get('content-length'), String(got.bytes.length));
});

t.test('an answer ending in what could begin the key gets every byte', async (t) => {
  answer = { type: 'text/event-stream', pieces: (key) => [chatChunk({ role: 'assistant', content: 'Hi' }), `data: [DONE]\n\n: ${key.slice(0, 9)}`] };
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', openai.relayKey, { ...chat(openai.modelSlug, true), stream_options: { include_usage: true } });
  t.equal(got.text, answer.pieces(HOST_KEY).join(''));
});

t.test('a placeholder host key is not masked out of answers', async (t) => {
  answer = { type: 'application/json', pieces: () => [JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Run ollama serve first.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 5, total_tokens: 6 } })] };
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', placeholder.relayKey, chat(placeholder.modelSlug, false));
  t.equal(JSON.parse(got.text).choices[0].message.content, 'Run ollama serve first.');
});
