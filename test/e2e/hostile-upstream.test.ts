// What a misbehaving upstream can do, answered from a raw TCP server: misframed answers are a 502
// at once (and fail over), stray bytes after an answer never reach the next caller, headers that
// are the upstream's own (cookies, hop-by-hop) never reach the client, a status that is not HTTP
// is a 502; headers only Relay may send (x-relay-*) never come from the upstream; and a host's
// connection cap waits within the host's timeout, then fails over.
import t from 'tap';
import net from 'node:net';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, setBindingWeights, viaRelay } from '../support/relay-client.ts';

/** A TCP server whose next answers are given as raw bytes, one per request, in order. */
async function rawUpstream(): Promise<{ url: string; answers: string[]; requests: number; close(): Promise<void> }> {
  const state = { answers: [] as string[], requests: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      // One request per head + body: answer once the declared body is in.
      for (;;) {
        const end = seen.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(seen.slice(0, end))?.[1] ?? 0);
        if (seen.length < end + 4 + length) return;
        seen = seen.slice(end + 4 + length);
        state.requests++;
        const answer = state.answers.shift();
        if (answer !== undefined) socket.write(answer);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answers: state.answers,
    get requests() { return state.requests; },
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

const relay = await startRelay();
const raw = await rawUpstream();
const good = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await raw.close();
  await good.close();
});

const JSON_OK = '{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
const ok = (extra = '') => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${JSON_OK.length}\r\n${extra}\r\n${JSON_OK}`;
const ask = { messages: [{ role: 'user', content: 'hi' }] };
const CHAT = '/vendor-a/v1/chat/completions';

const only = await seedRoute(relay, { baseUrl: `${raw.url}/v1`, adapter: 'openai', model: 'raw-only' });
await routeLive(relay, only);

for (const [what, answer] of [
  ['Content-Length and Transfer-Encoding both', `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`],
  ['a chunk size that is not hex', `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`],
  ['a status that is not HTTP', `HTTP/1.1 999 Odd\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`],
] as const) {
  t.test(`${what}: a 502 in the caller's shape, at once`, async (t) => {
    raw.answers.push(answer);
    const started = Date.now();
    const res = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
    t.equal(res.status, 502, res.text);
    t.match(JSON.parse(res.text), { error: { code: /RELAY_ERR_UPSTREAM/ } });
    t.ok(Date.now() - started < 2_000, 'without waiting for the timeout');
  });
}

t.test('a head past the size Relay reads (one huge header, or thousands) is a bad answer, not an unreachable upstream', async (t) => {
  // A host of its own: its failures count against its circuit, not raw-only's.
  const big = await seedRoute(relay, { baseUrl: `${raw.url}/v1`, adapter: 'openai', model: 'raw-big-head' });
  await routeLive(relay, big);
  const many = Array.from({ length: 3_000 }, (_, i) => `x-h${i}: v\r\n`).join('');
  for (const [what, headers] of [['one 100 kB header', `x-big: ${'a'.repeat(100_000)}\r\n`], ['3,000 headers', many]] as const) {
    raw.answers.push(ok(headers));
    const res = await viaRelay(relay, CHAT, big.relayKey, { model: 'raw-big-head', ...ask });
    t.equal(res.status, 502, what);
    t.match(JSON.parse(res.text), { error: { code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message: /headers larger than Relay reads/ } }, what);
  }
});

t.test('a head that ends in bare LFs does not hang for the whole timeout', async (t) => {
  raw.answers.push(`HTTP/1.1 200 OK\ncontent-type: application/json\ncontent-length: ${JSON_OK.length}\n\n${JSON_OK}`);
  const started = Date.now();
  const res = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
  t.ok([200, 502].includes(res.status), `answered ${res.status}`);
  t.ok(Date.now() - started < 3_000, `within ${Date.now() - started} ms (host timeout 5 s)`);
});

t.test('bytes after a complete answer are never read as the next caller\'s answer', async (t) => {
  const stray = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 34\r\n\r\n{"stolen":"another caller\'s data"}';
  raw.answers.push(ok() + stray, ok());
  const first = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
  t.equal(first.status, 200);
  t.same(JSON.parse(first.text), JSON.parse(JSON_OK));
  const second = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
  t.notMatch(second.text, /stolen/, 'the next caller never gets the stray bytes');
  raw.answers.length = 0;
});

t.test("the upstream's cookies and the headers its Connection names never reach the client", async (t) => {
  raw.answers.push(ok('set-cookie: session=upstream-secret\r\nconnection: keep-alive, x-upstream-hop\r\nx-upstream-hop: 1\r\nx-kept: yes\r\n'));
  const res = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
  t.equal(res.status, 200);
  t.equal(res.headers.get('set-cookie'), null);
  t.equal(res.headers.get('x-upstream-hop'), null);
  t.equal(res.headers.get('x-kept'), 'yes');
});

t.test("headers only Relay may send, and those that speak for the upstream's origin, never reach the client from it", async (t) => {
  const spoofed = 'x-relay-dropped: everything\r\nx-relay-fast-mode: standard\r\nx-relay-served-model: another-model\r\nx-relay-anything: 1\r\n'
    + 'x-request-id: upstream-chosen\r\nstrict-transport-security: max-age=31536000; includeSubDomains\r\nalt-svc: h3=":443"\r\n';
  raw.answers.push(ok(spoofed));
  const res = await viaRelay(relay, CHAT, only.relayKey, { model: 'raw-only', ...ask });
  t.equal(res.status, 200);
  const relayHeaders = Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('x-relay-')));
  t.same(relayHeaders, { 'x-relay-served-model': 'raw-only' }, "only Relay's own x-relay-* headers, with Relay's values");
  t.not(res.headers.get('x-request-id'), 'upstream-chosen', "the request id is Relay's");
  t.equal(res.headers.get('strict-transport-security'), null, "the upstream's HSTS policy is not Relay's origin's");
  t.equal(res.headers.get('alt-svc'), null, "nor are its alternative services");
});

t.test('a misframed answer fails over to the next binding before the first byte', async (t) => {
  const twice = await seedRoute(relay, { baseUrl: `${raw.url}/v1`, adapter: 'openai', model: 'raw-then-good' });
  const goodHost = await seedRoute(relay, { baseUrl: `${good.url}/v1`, adapter: 'openai', model: 'raw-then-good' });
  await setBindingWeights(relay, twice.modelId, { [twice.hostId]: 1_000, [goodHost.hostId]: 1 });
  await routeLive(relay, twice);
  const before = raw.requests;
  raw.answers.push(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n`);
  raw.answers.push(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n`);
  let served = 0;
  for (let i = 0; i < 2; i++) {
    const res = await viaRelay(relay, CHAT, twice.relayKey, { model: 'raw-then-good', ...ask });
    if (res.status === 200) served++;
  }
  t.equal(served, 2, 'both requests served, by the good host when the raw one misframed');
  t.equal(raw.requests - before, 2, 'each went to the misframing host first');
  raw.answers.length = 0;
});

t.test("a host's connection cap: the wait counts against its timeout, then the next binding serves", async (t) => {
  const slow = await startFakeUpstream();
  t.teardown(() => slow.close());
  const capped = await seedRoute(relay, { baseUrl: `${slow.url}/v1`, adapter: 'openai', model: 'capped' });
  await relay.api('PUT', `/api/hosts/by-id/${capped.hostId}`, { spec: { maxConnections: 1, timeoutMs: 1_500 } });
  const goodHost = await seedRoute(relay, { baseUrl: `${good.url}/v1`, adapter: 'openai', model: 'capped' });
  await setBindingWeights(relay, capped.modelId, { [capped.hostId]: 1_000, [goodHost.hostId]: 1 });
  await routeLive(relay, capped);
  // One stream holds the capped host's only connection for 4 s.
  const frames = openai.chatChunks({ model: 'capped', chunks: 4 });
  slow.enqueueStream({ headers: { 'content-type': 'text/event-stream' }, frames, delayMs: 1_000 }, { times: 1 });
  slow.script(() => ({ headersDelayMs: 4_000 }));
  const holding = viaRelay(relay, CHAT, capped.relayKey, { model: 'capped', stream: true, ...ask });
  await slow.waitForRequests(1, 3_000);
  const started = Date.now();
  const res = await viaRelay(relay, CHAT, capped.relayKey, { model: 'capped', ...ask });
  const took = Date.now() - started;
  t.equal(res.status, 200, 'served');
  t.ok(took < 3_000, `within ${took} ms: the wait for a connection ended at the host's timeout`);
  t.equal((await holding).status, 200, 'the stream that held the connection finished');
});
