// The lean server on a real socket: keep-alive, pipelining, heads and bodies cut anywhere, the
// handover to Node's server mid-connection, framing of the answers (read back by undici, whose
// parser is strict), refusals that leave the connection usable or close it, timeouts, shutdown.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import t, { type Test } from 'tap';
import { Client } from 'undici';
import type { BodyBytes } from '../../core/http/body-bytes.ts';
import type { ClientResponse } from '../../core/http/client-response.ts';
import { InferenceLane } from '../../core/http/inference-lane.ts';
import { installLeanServer } from '../../core/http/lean/lean-server.ts';

const BODY = '{"model":"m","stream":false}';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Harness {
  server: Server;
  url: string;
  port: number;
  /** TCP connections accepted. */
  connections: () => number;
  /** Answers whose client left before they were flushed. */
  abandoned: string[];
}

async function start(t: Test, lean = true): Promise<Harness> {
  const abandoned: string[] = [];
  const lane = new InferenceLane({
    bodyLimit: 1024,
    log: pino({ level: 'silent' }),
    refuse: (request, res, _shape, err) => {
      res.writeHead(err.status, { 'content-type': 'application/json', 'x-request-id': request.id });
      res.end(JSON.stringify({ error: err.code }));
    },
  });
  const route = (serve: (res: ClientResponse, raw: BodyBytes, url: string) => void | Promise<void>) => ({
    errorShape: 'canonical' as const,
    serve: async (request: { url: string }, res: ClientResponse, _body: unknown, raw: BodyBytes) => {
      await serve(res, raw, request.url);
    },
  });
  lane.add('/json', route((res, raw, url) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ served: 'lane', url, bytes: raw.length }));
  }));
  lane.add('/echo', route((res, raw) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // The parts as they would be written upstream, one after the other.
    res.end(JSON.stringify({ parts: raw.parts.length, text: Buffer.concat(raw.parts).toString('utf8'), length: raw.length }));
  }));
  lane.add('/length', route((res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
    res.write('hello');
    res.end(' lane');
  }));
  lane.add('/closing', route((res) => {
    res.writeHead(200, { 'content-type': 'text/plain', Connection: 'close' });
    res.end('bye');
  }));
  lane.add('/short', route((res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
    res.end('hello');
  }));
  lane.add('/stream', route(async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    for (const n of [1, 2, 3]) {
      await sleep(5);
      res.write(`data: ${n}\n\n`);
    }
    res.write(Buffer.alloc(20_000, 'x'));
    res.end('\n\ndata: end\n\n');
  }));
  lane.add('/empty', route((res) => {
    res.writeHead(204, { 'x-note': 'none' });
    res.end();
  }));
  lane.add('/bad-header', route((res) => {
    res.writeHead(200, { 'x-injected': 'a\r\nSet-Cookie: b' });
    res.end('never');
  }));
  lane.add('/late-failure', route((res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '4' });
    throw new Error('failed after the head was decided');
  }));
  lane.add('/throws', {
    errorShape: 'canonical',
    serve: () => {
      throw new Error('thrown before any await');
    },
  });
  lane.add('/wait', route((res) => new Promise<void>((resolve) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    res.on('close', () => {
      if (!res.writableFinished) abandoned.push('/wait');
      resolve();
    });
  })));
  let accepted = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (lane.tryServe(req, res)) return;
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ served: 'node', method: req.method, url: req.url, bytes }));
    });
  });
  if (lean) installLeanServer(server, lane);
  server.on('connection', () => accepted++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { server, port, url: `http://127.0.0.1:${port}`, connections: () => accepted, abandoned };
}

/** Sends `bytes` on a new socket and reads until the server closes it. */
async function exchange(port: number, write: (socket: Socket) => Promise<void> | void): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = once(socket, 'close');
  await write(socket);
  await closed;
  return Buffer.concat(chunks).toString('latin1');
}

const post = (path: string, body = BODY, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

t.test('one keep-alive connection: lean POSTs, a GET handed to Node, then Node serves the rest', async (t) => {
  const h = await start(t);
  const client = new Client(h.url, { pipelining: 1 });
  t.teardown(() => client.close());
  const ask = async (method: 'GET' | 'POST', path: string) => {
    const res = await client.request({ method, path, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? BODY : undefined });
    return { status: res.statusCode, headers: res.headers, body: await res.body.json() as Record<string, unknown> };
  };
  const first = await ask('POST', '/json?x=1');
  t.same(first.body, { served: 'lane', url: '/json?x=1', bytes: BODY.length });
  t.equal(first.headers.connection, 'keep-alive');
  t.equal(first.headers['keep-alive'], `timeout=${Math.floor(h.server.keepAliveTimeout / 1000)}`);
  t.match(first.headers.date, /GMT$/);
  t.equal(first.headers['content-length'], String(Buffer.byteLength(JSON.stringify(first.body))));
  t.same((await ask('POST', '/json')).body, { served: 'lane', url: '/json', bytes: BODY.length });
  t.same((await ask('GET', '/other')).body, { served: 'node', method: 'GET', url: '/other', bytes: 0 });
  t.same((await ask('POST', '/json')).body, { served: 'lane', url: '/json', bytes: BODY.length }, 'the lane route, through Node now');
  t.same((await ask('POST', '/elsewhere')).body, { served: 'node', method: 'POST', url: '/elsewhere', bytes: BODY.length });
  t.equal(h.connections(), 1, 'all on one connection');
});

t.test('pipelined requests are answered in order, a handover among them included', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/json?n=1') + post('/length') + post('/json?n=2') + 'GET /after HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n');
  });
  const order = [...text.matchAll(/"url":"([^"]+)"|hello lane/g)].map((m) => m[1] ?? 'hello lane');
  t.same(order, ['/json?n=1', 'hello lane', '/json?n=2', '/after']);
  t.equal(text.match(/HTTP\/1\.1 200 OK/g)?.length, 4);
});

t.test('heads and bodies cut into single bytes', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, async (socket) => {
    for (const byte of Buffer.from(post('/json', BODY, 'Connection: close\r\n'))) {
      socket.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(text, /\r\nConnection: close\r\n/);
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}$/);
});

t.test('a body that comes in several reads reaches the route as those parts, cut where the next request starts', async (t) => {
  const h = await start(t);
  const body = JSON.stringify({ model: 'm', text: 'é'.repeat(300) });
  const first = Buffer.from(post('/echo', body));
  const bytes = Buffer.concat([first, Buffer.from(post('/json', BODY, 'Connection: close\r\n'))]);
  const bodyEnd = first.length;
  const text = await exchange(h.port, async (socket) => {
    // Cut inside a two-byte character, and once more past the body's end, inside the next head.
    for (const [from, to] of [[0, 200], [200, 401], [401, bodyEnd + 10], [bodyEnd + 10, bytes.length]] as const) {
      socket.write(bytes.subarray(from, to));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  const echoed = JSON.parse(text.slice(text.indexOf('{'), text.indexOf('}HTTP/1.1') + 1)) as { parts: number; text: string; length: number };
  t.ok(echoed.parts >= 2, `the body in ${echoed.parts} parts`);
  t.equal(Buffer.from(echoed.text, 'latin1').toString('utf8'), body, 'one after the other, they are the body as sent');
  t.equal(echoed.length, Buffer.byteLength(body));
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}$/, 'the next request, read from the rest of the last part');
});

t.test('a pipelined request whose head and body came as separate reads while the one before was answered', async (t) => {
  const h = await start(t);
  const second = post('/json', BODY, 'Connection: close\r\n');
  const head = second.slice(0, second.length - BODY.length);
  const started = Date.now();
  const text = await exchange(h.port, async (socket) => {
    socket.write(post('/stream'));
    await new Promise((resolve) => setTimeout(resolve, 2));
    socket.write(head);
    await new Promise((resolve) => setTimeout(resolve, 2));
    socket.write(BODY); // no LF in it: the head before it is whole all the same
  });
  t.match(text, /data: end/, 'the first answer');
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}$/, 'then the second');
  t.ok(Date.now() - started < 1000, 'at once, not after a timeout');
});

t.test('a chunked request body goes to Node, which reads it for the lane', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(`POST /json HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`);
  });
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}\r\n0\r\n\r\n$/, 'Node writes it chunked');
});

t.test('a refusal before the body (415) skips that body and serves the next request', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/json', BODY).replace('application/json', 'text/plain') + post('/json', BODY, 'Connection: close\r\n'));
  });
  t.match(text, /^HTTP\/1\.1 415 /);
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}$/);
  t.equal(h.connections(), 1);
});

t.test('Connection: close given to writeHead closes the connection after the answer', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/closing') + post('/json'));
  });
  t.match(text, /\r\nConnection: close\r\n/);
  t.notMatch(text, /keep-alive/i);
  t.match(text, /bye$/);
  t.notMatch(text, /served/, 'the pipelined request after it is not read');
});

t.test('a declared body over the limit: 413, and the connection closes', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(`POST /json HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`);
  });
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /\r\nConnection: close\r\n/);
  t.match(text, /RELAY_ERR_BODY_TOO_LARGE/);
});

t.test('answers framed as Node frames them', async (t) => {
  const h = await start(t);
  const client = new Client(h.url);
  t.teardown(() => client.close());
  const stream = await client.request({ method: 'POST', path: '/stream', headers: { 'content-type': 'application/json' }, body: BODY });
  t.equal(stream.headers['transfer-encoding'], 'chunked');
  const text = await stream.body.text();
  t.ok(text.startsWith('data: 1\n\ndata: 2\n\ndata: 3\n\nxxx') && text.endsWith('\n\ndata: end\n\n'));
  t.equal(text.length, 'data: 1\n\n'.length * 3 + 20_000 + '\n\ndata: end\n\n'.length, 'a big chunk among small ones');

  const length = await client.request({ method: 'POST', path: '/length', headers: { 'content-type': 'application/json' }, body: BODY });
  t.equal(length.headers['content-length'], '10');
  t.equal(length.headers['transfer-encoding'], undefined);
  t.equal(await length.body.text(), 'hello lane');

  const empty = await client.request({ method: 'POST', path: '/empty', headers: { 'content-type': 'application/json' }, body: BODY });
  t.equal(empty.statusCode, 204);
  t.equal(empty.headers['x-note'], 'none');
  t.equal(empty.headers['transfer-encoding'], undefined);
  t.equal(empty.headers['content-length'], undefined);
  t.equal(await empty.body.text(), '');

  const after = await client.request({ method: 'POST', path: '/json', headers: { 'content-type': 'application/json' }, body: BODY });
  t.equal(after.statusCode, 200, 'the connection is still in step after all three');
  await after.body.dump();
  t.equal(h.connections(), 1);
});

t.test('fewer bytes than the Content-Length given: the connection is closed, never reused', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/short') + post('/json'));
  });
  t.match(text, /content-length: 10\r\n[\s\S]*\r\n\r\nhello$/, 'five bytes, then the close');
  t.notMatch(text, /served/, 'the next request was not answered on the broken connection');
});

t.test('a header value with CR LF throws, as in Node: the lane answers 500 instead', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/bad-header', BODY, 'Connection: close\r\n'));
  });
  t.match(text, /^HTTP\/1\.1 500 /);
  t.match(text, /RELAY_ERR_INTERNAL/);
  t.notMatch(text, /Set-Cookie/i, 'nothing of the injected header went out');
});

t.test('a failure after writeHead: headersSent already, so the connection is cut, not answered twice', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/late-failure'));
  });
  t.equal(text, '', 'no second head after the first was decided (as with Node)');
});

t.test('a route that throws at once: 500, and the server carries on', async (t) => {
  const h = await start(t);
  const text = await exchange(h.port, (socket) => {
    socket.write(post('/throws') + post('/json', BODY, 'Connection: close\r\n'));
  });
  t.match(text, /^HTTP\/1\.1 500 [\s\S]*RELAY_ERR_INTERNAL/);
  t.match(text, /\{"served":"lane","url":"\/json","bytes":28\}$/);
});

t.test('a client that leaves mid-answer: the answer sees close, unfinished', async (t) => {
  const h = await start(t);
  const socket = connect(h.port, '127.0.0.1');
  socket.write(post('/wait'));
  await once(socket, 'data');
  socket.destroy();
  for (let i = 0; i < 100 && h.abandoned.length === 0; i++) await sleep(10);
  t.same(h.abandoned, ['/wait']);
});

t.test('idle connections close after keepAliveTimeout; a slow head gets 408 after headersTimeout', async (t) => {
  const h = await start(t);
  h.server.keepAliveTimeout = 1000;
  h.server.headersTimeout = 1000;
  const began = Date.now();
  const idle = await exchange(h.port, () => {});
  t.equal(idle, '');
  const idleFor = Date.now() - began;
  t.ok(idleFor >= 1000 && idleFor < 3500, `closed after ${idleFor} ms`);
  const slow = await exchange(h.port, (socket) => {
    socket.write('POST /json HTTP/1.1\r\nHost: re');
  });
  t.match(slow, /^HTTP\/1\.1 408 Request Timeout\r\n/);
});

t.test('closing the server closes idle lean connections at once', async (t) => {
  const h = await start(t);
  const client = new Client(h.url);
  const res = await client.request({ method: 'POST', path: '/json', headers: { 'content-type': 'application/json' }, body: BODY });
  await res.body.dump();
  const began = Date.now();
  h.server.close();
  await once(h.server, 'close');
  t.ok(Date.now() - began < 1000, 'closed without waiting for the idle connection');
  await client.close();
});

t.test('without the lean server, the same answers come from Node', async (t) => {
  const h = await start(t, false);
  const client = new Client(h.url);
  t.teardown(() => client.close());
  const res = await client.request({ method: 'POST', path: '/json', headers: { 'content-type': 'application/json' }, body: BODY });
  t.same(await res.body.json(), { served: 'lane', url: '/json', bytes: BODY.length });
});
