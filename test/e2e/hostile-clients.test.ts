// What a hostile or broken client can do to the inference port, on raw sockets against Node's
// parser: hold memory with bodies it never finishes (the relay key is checked before the body, a
// body has deadlines, and bodies in flight are bounded process-wide), exhaust connections (capped,
// and the control port stays reachable), write garbage behind a streaming request (never written
// into the stream), nest JSON without end (400), and smuggle hop-by-hop headers upstream.
import t from 'tap';
import net from 'node:net';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { MAX_NESTING } from '../../core/http/inference-body.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';

const MAX_CONNECTIONS = 30;
const relay = await startRelay({
  config: {
    server: {
      host: '127.0.0.1', bodyIdleTimeoutMs: 400, bodyTimeoutMs: 1_500, bodyMemoryLimitBytes: 200 * 1024, maxConnections: MAX_CONNECTIONS,
    },
  },
});
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const chat = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'wire-gpt' });
await routeLive(relay, chat);
const port = Number(new URL(relay.inferenceUrl).port);
const CHAT = '/vendor-a/v1/chat/completions';

interface Exchange {
  /** Everything the server wrote, as text. */
  text(): string;
  write(data: string | Buffer): void;
  /** Resolves when the server closed the connection (ms since open). */
  closed: Promise<number>;
  destroy(): void;
}

function open(): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - started)));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({
      text: () => Buffer.concat(chunks).toString('utf8'),
      write: (data) => socket.write(data),
      closed,
      destroy: () => socket.destroy(),
    }));
    socket.once('error', reject);
  });
}

function head(path: string, headers: Record<string, string | number>): string {
  return `POST ${path} HTTP/1.1\r\nhost: relay\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

t.test('a keyless request that declares 30 MB: 401 at once from the headers, and the connection closes', async (t) => {
  const ex = await open();
  ex.write(head(CHAT, { 'content-type': 'application/json', 'content-length': 30 * 1024 * 1024 }));
  ex.write('{"model":"wire-gpt","messages":[');
  const ms = await Promise.race([ex.closed, new Promise<number>((r) => setTimeout(() => r(-1), 3_000))]);
  ex.destroy();
  t.ok(ms >= 0 && ms < 3_000, `closed after ${ms} ms, without the body`);
  t.match(ex.text(), /^HTTP\/1\.1 401 /);
  t.match(ex.text(), /RELAY_ERR_RELAY_KEY_INVALID|invalid_api_key|relay key/i);
});

t.test('a body that stalls: 408 after the gap between reads, and the connection closes', async (t) => {
  const ex = await open();
  ex.write(head(CHAT, { 'content-type': 'application/json', 'content-length': 1000, authorization: `Bearer ${chat.relayKey}` }));
  ex.write('{"model":"wire-gpt","messages":[');
  const ms = await ex.closed;
  t.match(ex.text(), /^HTTP\/1\.1 408 /);
  t.match(ex.text(), /RELAY_ERR_BODY_TIMEOUT/);
  t.ok(ms < 3_000, `closed after ${ms} ms`);
});

t.test('a body that trickles: 408 at the total deadline even though bytes keep coming', async (t) => {
  const ex = await open();
  ex.write(head(CHAT, { 'content-type': 'application/json', 'content-length': 1000, authorization: `Bearer ${chat.relayKey}` }));
  const drip = setInterval(() => ex.write(' '), 150);
  const ms = await ex.closed;
  clearInterval(drip);
  t.match(ex.text(), /^HTTP\/1\.1 408 /);
  t.ok(ms >= 1_400 && ms < 4_000, `closed after ${ms} ms (deadline 1.5 s)`);
});

t.test('bodies in flight are bounded process-wide: past the bound, 503 in the wire\'s shape', async (t) => {
  const first = await open();
  const second = await open();
  const declared = 150 * 1024;
  for (const ex of [first, second]) {
    ex.write(head(CHAT, { 'content-type': 'application/json', 'content-length': declared, authorization: `Bearer ${chat.relayKey}` }));
  }
  first.write(`{"model":"wire-gpt","pad":"${'x'.repeat(120 * 1024)}`);
  await new Promise((r) => setTimeout(r, 100));
  second.write(`{"model":"wire-gpt","pad":"${'x'.repeat(120 * 1024)}`);
  await second.closed;
  t.match(second.text(), /^HTTP\/1\.1 503 /);
  t.match(second.text(), /"code":"RELAY_ERR_OVERLOADED"/);
  first.destroy();
  await first.closed;
  // Once those bodies are gone, a request is served again.
  const ok = await viaRelay(relay, CHAT, chat.relayKey, { model: 'wire-gpt', messages: [{ role: 'user', content: 'after' }] });
  t.equal(ok.status, 200);
});

t.test('connections are capped; the control port stays reachable while the inference port is full', async (t) => {
  const held: Exchange[] = [];
  let closedByServer = 0;
  for (let i = 0; i < MAX_CONNECTIONS + 5; i++) {
    const ex = await open();
    void ex.closed.then(() => { closedByServer++; });
    held.push(ex);
  }
  await new Promise((r) => setTimeout(r, 300));
  t.ok(closedByServer >= 5, `${closedByServer} connections past the cap were closed by the server`);
  t.ok(held.length - closedByServer <= MAX_CONNECTIONS, `${held.length - closedByServer} stay open`);
  const control = await relay.api('GET', '/api/providers');
  t.equal(control.status, 200, 'the admin API answers');
  for (const ex of held) ex.destroy();
  await Promise.all(held.map((ex) => ex.closed));
  await new Promise((r) => setTimeout(r, 100));
  const ok = await viaRelay(relay, CHAT, chat.relayKey, { model: 'wire-gpt', messages: [{ role: 'user', content: 'after' }] });
  t.equal(ok.status, 200, 'served again once connections are freed');
});

t.test('garbage behind a streaming request is never written into the stream', async (t) => {
  up.enqueueStream({ headers: { 'content-type': 'text/event-stream' }, frames: openai.chatChunks({ model: 'wire-gpt', chunks: 6 }), delayMs: 60 });
  const body = JSON.stringify({ model: 'wire-gpt', stream: true, messages: [{ role: 'user', content: 'stream' }] });
  const ex = await open();
  ex.write(head(CHAT, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${chat.relayKey}` }) + body);
  await new Promise((r) => setTimeout(r, 100));
  ex.write('THIS IS NOT HTTP\r\n\r\n');
  await ex.closed;
  const text = ex.text();
  t.equal(text.match(/HTTP\/1\.1 /g)?.length, 1, 'one answer only: no 400 written into the stream');
  t.match(text, /^HTTP\/1\.1 200 /);
  t.match(text, /data: \[DONE\]/, 'the stream finished');
});

t.test(`nesting deeper than ${MAX_NESTING} levels on a translated route: 400 naming it`, async (t) => {
  const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'wire-translated' });
  await routeLive(relay, claude);
  const deep = `{"model":"wire-translated","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, deep);
  t.equal(res.status, 400);
  t.match(JSON.parse(res.text), { type: 'error', error: { type: 'invalid_request_error', message: new RegExp(`deeper than ${MAX_NESTING}`) } });
  const fine = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, { model: 'wire-translated', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(fine.status, 200, 'an ordinary request on the same route is served');
});

t.test('headers a client names in Connection are hop-by-hop: not forwarded', async (t) => {
  const body = JSON.stringify({ model: 'wire-gpt', messages: [{ role: 'user', content: 'hop' }] });
  const ex = await open();
  ex.write(head(CHAT, {
    'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${chat.relayKey}`,
    connection: 'close, x-private-hop', 'x-private-hop': 'secret', 'x-kept': 'yes',
  }) + body);
  await ex.closed;
  t.match(ex.text(), /^HTTP\/1\.1 200 /);
  const seen = up.lastRequest()!.headers;
  t.equal(seen['x-private-hop'], undefined);
  t.equal(seen['x-kept'], 'yes');
});
