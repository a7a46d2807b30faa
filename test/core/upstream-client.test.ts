// The upstream client (core/http/upstream-client.ts) against real sockets: an egress proxy named
// by HTTP_PROXY carries the calls (NO_PROXY exempts a host), a wait for a connection counts
// against the call's timeout, a caller that leaves while its call waits is let go at once, and an
// answer whose body is over leaves nothing listening on its caller's cancellation or signal.
import { getEventListeners } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { UpstreamBody } from '../../core/hooks.ts';
import { Cancellation } from '../../core/http/cancellation.ts';
import { UpstreamClient, UpstreamTimeoutError } from '../../core/http/upstream-client.ts';

const OPTIONS = { maxConnectionsPerOrigin: 16, connectTimeoutMs: 2_000, keepAliveTimeoutMs: 5_000 };

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An upstream that answers each request after `delayMs`, counting what it got. */
async function startUpstream(delayMs = 0): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delayMs);
  });
  const url = await listen(server);
  return { url, hits: () => hits, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** An HTTP proxy that tunnels CONNECT (undici's proxy agent tunnels every request), noting each target. */
async function startProxy(): Promise<{ url: string; targets: string[]; close: () => Promise<void> }> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
  });
  const url = await listen(server);
  return { url, targets, close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }) };
}

async function text(client: UpstreamClient, url: string, timeoutMs = 2_000, signal?: AbortSignal): Promise<string> {
  const res = await client.send(url, { headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs, signal });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

t.test('HTTP_PROXY carries upstream calls; NO_PROXY exempts a host; without either, calls go direct', async (t) => {
  const up = await startUpstream();
  const proxy = await startProxy();
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
  t.teardown(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await up.close();
    await proxy.close();
  });
  const port = new URL(up.url).port;

  delete process.env.HTTP_PROXY;
  delete process.env.NO_PROXY;
  const direct = new UpstreamClient(OPTIONS);
  t.equal(await text(direct, `${up.url}/v1/chat`), '{"ok":true}');
  t.same(proxy.targets, [], 'no proxy configured: straight to the upstream');
  await direct.close();

  process.env.HTTP_PROXY = proxy.url;
  const proxied = new UpstreamClient(OPTIONS);
  t.equal(await text(proxied, `${up.url}/v1/chat`), '{"ok":true}');
  t.same(proxy.targets, [`127.0.0.1:${port}`], 'the call went through the proxy');
  t.ok(proxied.connectionStats().size > 0, 'its connections are counted through the proxy agent');
  await proxied.close();

  process.env.NO_PROXY = '127.0.0.1';
  const exempt = new UpstreamClient(OPTIONS);
  t.equal(await text(exempt, `${up.url}/v1/chat`), '{"ok":true}');
  t.equal(proxy.targets.length, 1, 'a host NO_PROXY names is called directly');
  await exempt.close();
  t.equal(up.hits(), 3);
});

t.test('a call waiting for a connection times out at its deadline; a caller that leaves is let go', async (t) => {
  const up = await startUpstream(1_500);
  const client = new UpstreamClient(OPTIONS);
  t.teardown(async () => {
    await client.close();
    await up.close();
  });
  const transport = { maxConnections: 1 };
  // The one connection is busy for 1.5 s.
  const busy = client.send(`${up.url}/slow`, { headers: {}, body: '{}', timeoutMs: 5_000, transport });
  await new Promise((r) => setTimeout(r, 50));

  let started = Date.now();
  const queued = client.send(`${up.url}/queued`, { headers: {}, body: '{}', timeoutMs: 300, transport });
  t.ok(await queued.catch((err: unknown) => err) instanceof UpstreamTimeoutError, 'the wait counted against the timeout');
  const waited = Date.now() - started;
  t.ok(waited >= 280 && waited < 1_200, `gave up after ${waited} ms, not when the connection freed`);

  const leaving = new AbortController();
  started = Date.now();
  const abandoned = client.send(`${up.url}/abandoned`, { headers: {}, body: '{}', timeoutMs: 5_000, transport, signal: leaving.signal });
  setTimeout(() => leaving.abort(), 100);
  await t.rejects(abandoned, 'the caller left');
  t.ok(Date.now() - started < 1_200, 'let go when the caller left, not when a connection freed');

  // The kernel's requests carry a Cancellation instead of an AbortSignal: the same.
  const gone = new Cancellation();
  started = Date.now();
  const cancelled = client.send(`${up.url}/cancelled`, { headers: {}, body: '{}', timeoutMs: 5_000, transport, cancellation: gone });
  setTimeout(() => gone.abort(new Error('client left')), 100);
  await t.rejects(cancelled, { message: 'client left' }, 'the cancellation\'s reason');
  t.ok(Date.now() - started < 1_200, 'let go when the cancellation aborted');

  const first = await busy;
  first.body.resume();
  await new Promise((r) => setTimeout(r, 200));
  t.equal(up.hits(), 1, 'no abandoned call was sent once the connection freed');
});

t.test('a caller already gone sends nothing; a head past the deadline is let go; a status outside HTTP\'s is refused', async (t) => {
  const up = await startUpstream(300);
  const client = new UpstreamClient(OPTIONS);
  const odd = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end('HTTP/1.1 999 Odd\r\ncontent-length: 0\r\n\r\n'));
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    await client.close();
    await up.close();
    await new Promise((r) => odd.close(r));
  });
  const transport = { maxConnections: 1 };

  const gone = new Cancellation();
  gone.abort(new Error('client left'));
  await t.rejects(client.send(`${up.url}/gone`, { headers: {}, body: '{}', timeoutMs: 5_000, transport, cancellation: gone }), { message: 'client left' });
  const left = new AbortController();
  left.abort(new Error('left too'));
  await t.rejects(client.send(`${up.url}/left`, { headers: {}, body: '{}', timeoutMs: 5_000, transport, signal: left.signal }), { message: 'left too' });
  t.equal(up.hits(), 0, 'neither was sent');

  const late = await client.send(`${up.url}/late`, { headers: {}, body: '{}', timeoutMs: 100, transport }).catch((err: unknown) => err);
  t.ok(late instanceof UpstreamTimeoutError, 'the deadline passed before the head');
  // The late head's body is dropped, so the one connection serves the next call.
  const next = await client.send(`${up.url}/next`, { headers: {}, body: '{}', timeoutMs: 2_000, transport });
  t.equal(next.status, 200);
  next.body.resume();

  const { port } = odd.address() as AddressInfo;
  await t.rejects(client.send(`http://127.0.0.1:${port}/odd`, { headers: {}, body: '{}', timeoutMs: 2_000 }), { code: 'RELAY_UPSTREAM_BAD_RESPONSE', message: /status 999/ });
});

t.test('an answer read to its end or let go leaves no listener on its caller\'s cancellation or signal', async (t) => {
  const up = await startUpstream();
  const client = new UpstreamClient(OPTIONS);
  t.teardown(async () => {
    await client.close();
    await up.close();
  });
  // undici's body is a Readable, which the plugin API types as less.
  const stream = (body: UpstreamBody) => body as unknown as Readable;
  const closed = (body: UpstreamBody) => new Promise((resolve) => stream(body).once('close', resolve));

  const cancellation = new Cancellation();
  const read = await client.send(`${up.url}/read`, { headers: {}, body: '{}', timeoutMs: 2_000, cancellation });
  t.equal(cancellation.listenerCount, 1, 'while the body is open, leaving aborts it');
  const ended = closed(read.body);
  for await (const _ of read.body) void _;
  await ended;
  t.equal(cancellation.listenerCount, 0, 'read to its end: the cancellation holds nothing of the call');

  // A signal that outlives the call (a timeout signal lives until it fires) holds nothing either.
  const signal = AbortSignal.timeout(60_000);
  const dropped = await client.send(`${up.url}/dropped`, { headers: {}, body: '{}', timeoutMs: 2_000, signal });
  t.equal(getEventListeners(signal, 'abort').length, 1, 'while the body is open, the signal aborts it');
  const gone = closed(dropped.body);
  dropped.body.destroy();
  await gone;
  t.equal(getEventListeners(signal, 'abort').length, 0, 'let go unread: the signal holds nothing of the call');

  // The listener still works while the body is open: the caller leaving mid-answer ends it.
  const leaving = new Cancellation();
  const open = await client.send(`${up.url}/open`, { headers: {}, body: '{}', timeoutMs: 2_000, cancellation: leaving });
  const cut = closed(open.body);
  leaving.abort(new Error('client left'));
  await cut;
  t.equal(stream(open.body).destroyed, true, 'the body was cut when the caller left');
});
