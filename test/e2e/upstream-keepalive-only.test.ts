// An upstream stream that stays open without saying anything: keep-alive comments or Anthropic's
// `ping` events only, or no byte at all, after it began (a proxy whose backend hung), or more of
// them after its own error event. The host's
// timeoutMs is between bytes, and comments are bytes; Relay bounds the wait between events by it
// too (a frame still arriving is not idle), and a translated stream ends with the error the client
// was sent. Each upstream here would keep its stream open for 8 s and then end it itself: the
// client's stream ending before that, with the upstream hung up on, is Relay's doing.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

/** What the upstream writes first; then `keepAlive` every 100 ms until Relay hangs up, or 8 s pass. */
let opening = '';
const COMMENT = ': keep-alive\n\n';
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';
let keepAlive = COMMENT;
/** Whether the last stream was ended by the upstream itself (after 8 s) rather than by Relay. */
let endedItself = false;
/** Instead: a whole stream written in 20 slices 100 ms apart (one long frame arriving over 2 s). */
let sliced: string | null = null;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    endedItself = false;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (sliced !== null) {
      const text = sliced;
      const size = Math.ceil(text.length / 20);
      const next = (at: number): void => {
        if (at >= text.length) return void res.end();
        res.write(text.slice(at, at + size));
        setTimeout(() => next(at + size), 100);
      };
      return next(0);
    }
    res.write(opening);
    // keepAlive '': nothing at all after the opening.
    const ping = keepAlive === '' ? undefined : setInterval(() => res.write(keepAlive), 100);
    const stop = setTimeout(() => {
      endedItself = true;
      res.end();
    }, 8_000);
    res.on('close', () => {
      clearInterval(ping);
      clearTimeout(stop);
    });
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const relay = await startRelay();
t.teardown(async () => {
  await relay.close();
  await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
});

const openai = await seedRoute(relay, { baseUrl: url, adapter: 'openai', model: 'pinging-gpt', shapes: ['openai.chat'] });
const anthropic = await seedRoute(relay, { baseUrl: url, adapter: 'anthropic', model: 'pinging-claude' });
for (const r of [openai, anthropic]) {
  await relay.api('PUT', `/api/hosts/by-id/${r.hostId}`, { spec: { timeoutMs: 1_000 } });
  await routeLive(relay, r);
}
await new Promise((r) => setTimeout(r, 300)); // the timeout's change reaches the snapshot

const CHAT_START = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] })}\n\n`;
const MESSAGES_START = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
  + 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
  + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n';
const MESSAGES_ERROR = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';

/** A streamed request through Relay: the text the client got, and whether its stream was cut. */
async function stream(path: string, relayKey: string, body: Record<string, unknown>) {
  const res = await fetch(`${relay.inferenceUrl}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${relayKey}` }, body: JSON.stringify({ ...body, stream: true }),
  });
  let text = '';
  let cut = false;
  try {
    for await (const chunk of res.body!) text += Buffer.from(chunk).toString('utf8');
  } catch {
    cut = true;
  }
  return { status: res.status, text, cut, requestId: res.headers.get('x-request-id')! };
}
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

/** Both translated directions: the stream opens with some output, then the upstream idles; the client's ends with an error event saying `why`. */
async function translatedEndsWith(t: Test, why: RegExp): Promise<void> {
  for (const [what, path, route, body, start] of [
    ['Messages -> OpenAI', '/vendor-b/v1/messages', openai, messages, CHAT_START],
    ['Chat -> Anthropic', '/vendor-a/v1/chat/completions', anthropic, chat, MESSAGES_START],
  ] as const) {
    opening = start;
    const got = await stream(path, route.relayKey, body(route.modelSlug));
    t.equal(got.status, 200, what);
    t.match(got.text, /Hel/, `${what}: the output before it`);
    t.match(got.text, why, `${what}: an error event says why`);
    t.notOk(endedItself, `${what}: Relay hung up on the upstream`);
    const record = await usageRecord(relay, got.requestId);
    t.equal(record.error_code, 'upstream_stream_error', `${what}: recorded as broken`);
  }
}

t.test('translated: keep-alives only, past the host timeout, end the stream with an error naming it', async (t) => {
  await translatedEndsWith(t, /The upstream sent no event for 1000 ms \(the host's timeoutMs\), only keep-alives\./);
});

t.test('passed through: keep-alives only, past the host timeout, cut the stream', async (t) => {
  opening = CHAT_START;
  const got = await stream('/vendor-a/v1/chat/completions', openai.relayKey, { ...chat(openai.modelSlug), stream_options: { include_usage: true } });
  t.equal(got.status, 200);
  t.ok(got.text.startsWith(CHAT_START), 'the client got what came');
  t.ok(got.cut, 'then its stream was cut, as any upstream failure after the first byte');
  t.notOk(endedItself, 'Relay hung up on the upstream');
  const record = await usageRecord(relay, got.requestId);
  t.equal(record.error_code, 'upstream_stream_error');
});

t.test("translated: after the upstream's error event, the client's stream ends, however long the upstream stays", async (t) => {
  opening = MESSAGES_START + MESSAGES_ERROR;
  const got = await stream('/vendor-a/v1/chat/completions', anthropic.relayKey, chat(anthropic.modelSlug));
  t.equal(got.status, 200);
  t.match(got.text, /"message":"Overloaded"/, 'the error reached the client');
  t.notOk(got.cut, 'and its stream ended there');
  t.notOk(endedItself, 'Relay hung up on the upstream');
});

t.test('a long frame arriving over longer than the host timeout is not idle: the stream completes', async (t) => {
  const long = 'x'.repeat(4_000);
  sliced = `${CHAT_START}data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: long }, finish_reason: null }] })}\n\n`
    + `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\ndata: [DONE]\n\n`;
  t.teardown(() => { sliced = null; });
  const passed = await stream('/vendor-a/v1/chat/completions', openai.relayKey, { ...chat(openai.modelSlug), stream_options: { include_usage: true } });
  t.equal(passed.text, sliced, 'passed through whole');
  t.notOk(passed.cut);
  const translated = await stream('/vendor-b/v1/messages', openai.relayKey, messages(openai.modelSlug));
  t.match(translated.text, new RegExp(`${long}[\\s\\S]*message_stop`), 'translated whole, to its end');
  t.notMatch(translated.text, /no event for/);
});

t.test("Anthropic's ping events are keep-alives too: only pings past the host timeout end the stream", async (t) => {
  keepAlive = PING;
  t.teardown(() => { keepAlive = COMMENT; });
  opening = MESSAGES_START;
  const translated = await stream('/vendor-a/v1/chat/completions', anthropic.relayKey, chat(anthropic.modelSlug));
  t.equal(translated.status, 200);
  t.match(translated.text, /Hel/, 'translated: the output before them');
  t.match(translated.text, /The upstream sent no event for 1000 ms \(the host's timeoutMs\), only keep-alives\./, 'translated: an error event says why');
  t.notOk(endedItself, 'translated: Relay hung up on the upstream');
  t.equal((await usageRecord(relay, translated.requestId)).error_code, 'upstream_stream_error', 'translated: recorded as broken');

  const passed = await stream('/vendor-b/v1/messages', anthropic.relayKey, messages(anthropic.modelSlug));
  t.equal(passed.status, 200);
  t.ok(passed.text.startsWith(MESSAGES_START), 'passed through: the client got what came');
  t.match(passed.text, /event: ping/, 'and the pings, as they came');
  t.ok(passed.cut, 'then its stream was cut');
  t.notOk(endedItself, 'passed through: Relay hung up on the upstream');
  t.equal((await usageRecord(relay, passed.requestId)).error_code, 'upstream_stream_error', 'passed through: recorded as broken');
});

t.test('translated: an upstream silent past the host timeout mid-stream ends the stream with an error naming the timeout', async (t) => {
  keepAlive = '';
  t.teardown(() => { keepAlive = COMMENT; });
  // Not "the stream ended before it finished": the timeout passed.
  await translatedEndsWith(t, /The upstream sent nothing for 1000 ms \(the host's timeoutMs\) in the middle of its stream\./);
});
