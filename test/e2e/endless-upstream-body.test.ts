// An upstream that never stops sending a body Relay reads whole: an error answer (read to take
// Relay's host key out of it, or to render it in the client's shape), and an answer to translate,
// whole or streamed (the encoders keep a stream's output for its last event). The body deadline is between chunks, so a steady sender meets it; Relay reads up
// to a bound, stops, aborts the upstream request and answers the client, rather than hanging or
// filling its memory.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream, type RawAction } from '../support/fake-upstream.ts';
import { readThenAbort, routeLive, viaRelay, type Answer } from '../support/relay-client.ts';

const logLines: string[] = [];
const relay = await startRelay({ logLevel: 'warn', logStream: { write: (line) => logLines.push(line) } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

interface Endless {
  action: RawAction;
  /** Resolves with the bytes written once Relay hangs up. */
  closed: Promise<number>;
}

/** An answer whose body starts with `opening` and then repeats `filler` forever, written as fast as it is read. */
function endless(status: number, opening: string, filler: Buffer = Buffer.alloc(64 * 1024, 0x20), contentType = 'application/json'): Endless {
  let report!: (sent: number) => void;
  const closed = new Promise<number>((resolve) => { report = resolve; });
  const action: RawAction = {
    kind: 'raw',
    handle(_req, res: ServerResponse) {
      let sent = 0;
      res.on('close', () => report(sent));
      res.writeHead(status, { 'content-type': contentType });
      res.write(opening);
      const pump = (): void => {
        while (!res.destroyed) {
          sent += filler.length;
          if (!res.write(filler)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    },
  };
  return { action, closed };
}

const openaiRoute = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'endless-gpt' });
await routeLive(relay, openaiRoute);
const chat = { model: 'endless-gpt', messages: [{ role: 'user', content: 'hi' }] };
const messages = { model: 'endless-gpt', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

/** Sends `body` to `path` while the upstream answers with an endless error: the client's answer, and the bytes written before Relay hung up. */
async function askAgainstEndlessError(path: string, body: unknown): Promise<{ res: Answer; sent: number }> {
  const endlessError = endless(400, '{"error":{"message":"bad request","type":"invalid_request_error"}');
  up.enqueue(endlessError.action, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, path, openaiRoute.relayKey, body);
  return { res, sent: await endlessError.closed };
}

t.test('an endless error answer to Relay\'s own host key: read up to 1 MB, then the client gets it', async (t) => {
  t.setTimeout(30_000);
  const { res, sent } = await askAgainstEndlessError('/vendor-a/v1/chat/completions', chat);
  t.equal(res.status, 400, 'the upstream\'s status');
  t.equal(res.text.length, 1024 * 1024, 'its first megabyte');
  t.ok(sent < 64 * 1024 * 1024, `Relay hung up on the upstream (${sent} bytes written)`);
});

t.test('an endless error answer to a translated request: the client gets an error in its shape', async (t) => {
  t.setTimeout(30_000);
  const { res, sent } = await askAgainstEndlessError('/vendor-b/v1/messages', messages);
  t.equal(res.status, 400);
  t.match(JSON.parse(res.text), { type: 'error', error: { type: 'invalid_request_error' } }, 'Anthropic\'s error shape');
  t.ok(sent < 64 * 1024 * 1024, `Relay hung up on the upstream (${sent} bytes written)`);
});

t.test('an endless answer to translate: a 502 once it passes 64 MB, not a process out of memory', async (t) => {
  t.setTimeout(60_000);
  const body = endless(200, '{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[],"padding":"');
  up.enqueue(body.action, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', openaiRoute.relayKey, messages);
  t.equal(res.status, 502);
  t.match(JSON.parse(res.text), { type: 'error', error: { message: /could not be read: it is larger than 67108864 bytes/ } });
  const sent = await body.closed;
  t.ok(sent >= 64 * 1024 * 1024 && sent < 128 * 1024 * 1024, `read to the bound, then hung up (${sent} bytes written)`);
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', openaiRoute.relayKey, chat)).status, 200, 'and Relay serves the next request');
});

t.test('an endless stream to translate: the client\'s stream ends with an error once it passes 64 MB', async (t) => {
  t.setTimeout(60_000);
  const delta = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(8 * 1024) }, finish_reason: null }] })}\n\n`;
  const body = endless(200, '', Buffer.from(delta.repeat(8)), 'text/event-stream');
  up.enqueue(body.action, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, '/vendor-b/v1/messages', openaiRoute.relayKey, { ...messages, stream: true });
  t.equal(res.status, 200, 'the stream had begun');
  const tail = res.text.slice(-4096);
  t.match(tail, /event: error\ndata: \{"type":"error"/, 'and ends in the client\'s shape, with an error event');
  t.match(tail, /"message":"The upstream's stream passed 67108864 bytes, more than Relay translates\."/, 'which says why');
  const requestId = res.headers.get('x-request-id');
  const logged = logLines.map((l) => JSON.parse(l) as { reqId?: string; msg?: string; err?: string }).find((l) => l.reqId === requestId && /mid-response/.test(l.msg ?? ''));
  t.match(logged, { err: /passed 67108864 bytes/, msg: /the client's stream ends with an error event/ }, 'and the log says so');
  // Recorded once the vendor's count of the prompt answered (unreported-usage.ts).
  const estimated = /^relay_estimated_answers_total\{model="endless-gpt",reason="upstream_error"\} [1-9]/m;
  await eventually(async () => estimated.test(String((await relay.api<string>('GET', '/metrics')).body)));
  t.pass('and /metrics counts its usage as estimated');
  t.notMatch(tail, /message_stop/);
  const sent = await body.closed;
  t.ok(sent >= 64 * 1024 * 1024 && sent < 128 * 1024 * 1024, `read to the bound, then hung up (${sent} bytes written)`);
});

t.test('a passed-through Chat stream whose frame never ends: its bytes reach the client as they come, not held', async (t) => {
  t.setTimeout(60_000);
  // Relay asks for usage the client did not (stream_options), so it reads each frame to hide what the client did not ask for.
  const opening = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] })}\n\ndata: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"`;
  const body = endless(200, opening, Buffer.alloc(64 * 1024, 0x78), 'text/event-stream');
  up.enqueue(body.action, { path: '/v1/chat/completions' });
  const wanted = 16 * 1024 * 1024;
  const { text } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', openaiRoute.relayKey, { ...chat, stream: true }, (x) => x.length >= wanted);
  t.ok(text.length >= wanted, `the client got ${text.length} bytes of the unended frame`);
  t.ok(text.startsWith('data: {"id":"chatcmpl-1"'), 'as the upstream sent them');
  const sent = await body.closed;
  t.ok(sent < 4 * wanted, `and Relay hung up on the upstream when the client left (${sent} bytes written)`);
});
