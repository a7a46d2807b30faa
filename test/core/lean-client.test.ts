// The lean upstream client (core/http/lean-client/) on real sockets, against raw servers that
// write exact bytes, so malformed and unusual answers can be produced. The same answers read by
// undici must come out the same (settled or not, status, headers, body bytes, how the body
// ended); delivery one byte at a time changes nothing; connections are reused only when clean;
// timeouts, cancellation, concurrency, backpressure and request writing hold. Where undici reads
// an answer differently, the case says so and pins both behaviours: the lean client may refuse
// more, but never resolves with a body other than the one the server framed.
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { closeUpstreamPools, sendUpstream, useLeanUpstreamClient, type SendOptions } from '../../core/http/upstream.ts';
import type { UpstreamResponse } from '../../core/hooks.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => setImmediate(resolve));
const CLIENTS = [['lean', true], ['undici', false]] as const;
/**
 * Before the next request on a kept-alive connection. The lean client frees a connection as the
 * answer ends; undici frees its client only after the end was handed over, so a request sent
 * straight from the body's end finds it busy and opens a second connection: undici waits a little.
 */
const idle = (lean: boolean) => (lean ? Promise.resolve() : sleep(10));
t.teardown(async () => {
  useLeanUpstreamClient(true);
  await closeUpstreamPools();
});

// ---- a raw server: reads requests (head, Content-Length body), answers with exact bytes

interface Received {
  head: string;
  body: Buffer;
  /** Index of the TCP connection that carried it. */
  connection: number;
}

interface RawServer {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  requests: Received[];
  /** Every byte each connection sent, by connection index. */
  bytes: Buffer[];
  sockets: Socket[];
  /** Resolves when the server side of connection `i` has closed. */
  closed(i: number): Promise<unknown>;
  close(): void;
}

type Answer = (socket: Socket, request: Received) => unknown;

async function rawServer(t: Test, answer: Answer, host = '127.0.0.1'): Promise<RawServer> {
  const closings: Array<Promise<unknown>> = [];
  const raw: RawServer = {
    url: '',
    port: 0,
    connections: () => raw.sockets.length,
    requests: [],
    bytes: [],
    sockets: [],
    closed: (i) => closings[i]!,
    close: () => {
      for (const socket of raw.sockets) socket.destroy();
      server.close();
    },
  };
  const server = createServer((socket) => {
    const id = raw.sockets.length;
    raw.sockets.push(socket);
    raw.bytes.push(Buffer.alloc(0));
    // Not once(socket, 'close'): that rejects on an 'error' (a reset) before the close.
    closings.push(new Promise((resolve) => socket.once('close', resolve)));
    socket.setNoDelay(true);
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      raw.bytes[id] = Buffer.concat([raw.bytes[id]!, data]);
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = { head, body: buffered.subarray(end + 4, end + 4 + length), connection: id };
        buffered = buffered.subarray(end + 4 + length);
        raw.requests.push(request);
        Promise.resolve(answer(socket, request)).catch(() => socket.destroy());
      }
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  raw.port = (server.address() as AddressInfo).port;
  raw.url = `http://${host.includes(':') ? `[${host}]` : host}:${raw.port}`;
  t.teardown(raw.close);
  return raw;
}

/** How an answer goes onto the wire: at once, one byte per write, or in uneven small pieces. */
type Delivery = 'whole' | 'bytewise' | 'pieces';

async function deliver(socket: Socket, bytes: Buffer, delivery: Delivery): Promise<void> {
  if (delivery === 'whole') {
    socket.write(bytes);
    return;
  }
  let seed = 7;
  for (let at = 0; at < bytes.length;) {
    // setImmediate between writes: the client (same process) reads each piece on its own.
    seed = (seed * 31 + 11) % 97;
    const size = delivery === 'bytewise' ? 1 : 1 + (seed % 7);
    if (socket.destroyed) return;
    socket.write(bytes.subarray(at, at + size));
    at += size;
    await tick();
  }
}

/** A full answer with a Content-Length body. */
const ok = (body: string, extra = '') => `HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n${extra}\r\n${body}`;

// ---- a call through either client, reduced to what can be compared

interface Outcome {
  settled: 'resolved' | 'rejected';
  /** The rejection's or body error's code (not compared across clients: parse errors differ). */
  code?: string;
  status?: number;
  headers?: UpstreamResponse['headers'];
  /** Every body byte read, as latin1. */
  body?: string;
  ended?: 'end' | 'error';
}

/** An error's code; a DOMException's numeric code is no use, its name is (AbortError). */
const codeOf = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : (err as Error).name;
};

async function call(lean: boolean, url: string, options: Partial<SendOptions> = {}): Promise<Outcome> {
  useLeanUpstreamClient(lean); // sendUpstream picks its client synchronously
  const pending = sendUpstream(url, { method: 'GET', headers: {}, timeoutMs: 1500, ...options });
  useLeanUpstreamClient(true);
  let res: UpstreamResponse;
  try {
    res = await pending;
  } catch (err) {
    return { settled: 'rejected', code: codeOf(err) };
  }
  return { settled: 'resolved', status: res.status, headers: res.headers, ...await drain(res.body) };
}

async function drain(body: AsyncIterable<Buffer>): Promise<Pick<Outcome, 'body' | 'ended' | 'code'>> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body) chunks.push(chunk);
    return { body: Buffer.concat(chunks).toString('latin1'), ended: 'end' };
  } catch (err) {
    return { body: Buffer.concat(chunks).toString('latin1'), ended: 'error', code: codeOf(err) };
  }
}

/** The parts both clients must agree on. */
const comparable = ({ code: _code, ...rest }: Outcome) => rest;

/** Rejects when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => { throw new Error(`${what}: not within ${ms} ms`); })]);
}

async function until(condition: () => boolean, what: string, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
}

// ---- the answers

type Want =
  /** Resolves, and the body ends normally with exactly these bytes (latin1). */
  | { status: number; body: string; headers?: Record<string, string | string[]>; absent?: string[] }
  /** The promise rejects. */
  | { rejects: true }
  /** The head resolves, the body fails; what was read is a prefix of these framed bytes. */
  | { bodyFails: string };

interface Case {
  name: string;
  answer: string;
  method?: 'GET' | 'POST' | 'HEAD';
  /** The server ends the connection after writing the answer. */
  close?: boolean;
  /** What the lean client does (and undici too, unless `undici` says otherwise). */
  want: Want;
  /** undici reads this answer differently: its outcome, and why the lean reading stands. */
  undici?: { want: Want; why: string };
}

/** A framing error in the head (Content-Length, Transfer-Encoding) fails the body, not the promise. */
const CHUNKED = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n';
const GZIPISH = '\x1f\x8b\x08\x00\r\n\x00\xff\xfe';

const CASES: Case[] = [
  // well-formed
  { name: 'Content-Length body', answer: ok('hello world', 'Content-Type: text/plain\r\n'), want: { status: 200, body: 'hello world', headers: { 'content-type': 'text/plain', 'content-length': '11' } } },
  { name: 'Content-Length 0', answer: ok(''), want: { status: 200, body: '' } },
  { name: 'a 500 with a body', answer: 'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops', want: { status: 500, body: 'oops' } },
  { name: 'chunked, several chunks', answer: `${CHUNKED}\r\n5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n`, want: { status: 200, body: 'hello world' } },
  { name: 'chunk extensions', answer: `${CHUNKED}\r\n5;foo=bar\r\nhello\r\n6;a;b="x y"\r\n world\r\n0;last=1\r\n\r\n`, want: { status: 200, body: 'hello world' } },
  { name: 'chunked with trailers (dropped, not headers)', answer: `${CHUNKED}\r\n5\r\nhello\r\n0\r\nX-Trailer: yes\r\nX-Checksum: abc\r\n\r\n`, want: { status: 200, body: 'hello', absent: ['x-trailer', 'x-checksum'] } },
  { name: 'upper-case hex and leading zeros in chunk sizes', answer: `${CHUNKED}\r\nA\r\n0123456789\r\n1F\r\n${'x'.repeat(31)}\r\n0003\r\nabc\r\n0\r\n\r\n`, want: { status: 200, body: `0123456789${'x'.repeat(31)}abc` } },
  { name: 'chunk data holding CR LF and a fake chunk line', answer: `${CHUNKED}\r\n9\r\n\r\n0\r\n\r\nab\r\n0\r\n\r\n`, want: { status: 200, body: '\r\n0\r\n\r\nab' } },
  { name: 'Transfer-Encoding: gzip, chunked (the coding is passed through undecoded)', answer: `HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${GZIPISH.length.toString(16)}\r\n${GZIPISH}\r\n0\r\n\r\n`, want: { status: 200, body: GZIPISH, headers: { 'transfer-encoding': 'gzip, chunked' } } },
  { name: 'lower-case name, mixed-case value: transfer-encoding: Chunked', answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', want: { status: 200, body: 'abc' } },
  { name: '204 with no body', answer: 'HTTP/1.1 204 No Content\r\nX-Note: none\r\n\r\n', want: { status: 204, body: '', headers: { 'x-note': 'none' } } },
  {
    name: '304 with a Content-Length but no body',
    answer: 'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 10\r\n\r\n',
    want: { status: 304, body: '' },
    undici: { want: { bodyFails: '' }, why: 'it holds the 304\'s Content-Length against the absent body (UND_ERR_RES_CONTENT_LENGTH_MISMATCH); RFC 9110 15.4.5: a 304 has no body, its Content-Length is the would-be one' },
  },
  { name: 'HEAD: Content-Length in the head, no body', method: 'HEAD', answer: 'HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n', want: { status: 200, body: '', headers: { 'content-length': '42' } } },
  { name: 'HEAD: chunked in the head, no body', method: 'HEAD', answer: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', want: { status: 200, body: '' } },
  {
    name: '100 Continue, then the 200',
    answer: `HTTP/1.1 100 Continue\r\n\r\n${ok('ok')}`,
    want: { status: 200, body: 'ok' },
    undici: { want: { rejects: true }, why: 'it refuses any 100 (SocketError "bad response", as it never sends Expect); RFC 9110 15.2: a client parses an unexpected 1xx and goes on to the final answer' },
  },
  { name: '103 Early Hints, then the 200 (the hints\' headers are not the answer\'s)', answer: `HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n${ok('ok', 'X-Final: 1\r\n')}`, want: { status: 200, body: 'ok', headers: { 'x-final': '1' }, absent: ['link'] } },
  {
    name: 'two 1xx answers, then the 200',
    answer: `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n${ok('ok')}`,
    want: { status: 200, body: 'ok' },
    undici: { want: { rejects: true }, why: 'it refuses any 100, as above' },
  },
  { name: 'close-delimited body (no Content-Length, no Transfer-Encoding)', answer: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close', close: true, want: { status: 200, body: 'until the close' } },
  { name: 'Transfer-Encoding without chunked: read until the close', answer: `HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n${GZIPISH}`, close: true, want: { status: 200, body: GZIPISH } },
  { name: 'HTTP/1.0 with Content-Length', answer: 'HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc', want: { status: 200, body: 'abc' } },
  { name: 'HTTP/1.0, close-delimited', answer: 'HTTP/1.0 200 OK\r\n\r\nold style', close: true, want: { status: 200, body: 'old style' } },
  { name: 'status line without a reason phrase', answer: 'HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok', want: { status: 200, body: 'ok' } },
  { name: 'status line with an empty reason phrase', answer: 'HTTP/1.1 404 \r\nContent-Length: 2\r\n\r\nno', want: { status: 404, body: 'no' } },
  {
    name: 'repeated headers become arrays, in order',
    answer: ok('', 'Set-Cookie: a=1; Path=/\r\nSet-Cookie: b=2\r\nX-Foo: 1\r\nx-foo: 2\r\nX-FOO: 3\r\n'),
    want: { status: 200, body: '', headers: { 'set-cookie': ['a=1; Path=/', 'b=2'], 'x-foo': ['1', '2', '3'] } },
  },
  {
    name: 'leading and trailing spaces and tabs are trimmed, inner ones kept',
    answer: ok('', 'X-Spaces:   padded   \r\nX-Tabs:\t\ttabbed\t\r\nX-Inner: \t a \t b \t \r\nX-Empty:\r\nX-Blank:   \r\n'),
    want: { status: 200, body: '', headers: { 'x-spaces': 'padded', 'x-tabs': 'tabbed', 'x-inner': 'a \t b', 'x-empty': '', 'x-blank': '' } },
    undici: {
      want: { status: 200, body: '', headers: { 'x-spaces': 'padded   ', 'x-tabs': 'tabbed\t', 'x-inner': 'a \t b \t ', 'x-empty': '', 'x-blank': '' } },
      why: 'llhttp drops leading whitespace but keeps trailing whitespace in a value; RFC 9110 5.5: the value excludes OWS on both sides',
    },
  },
  { name: 'obs-text (0x80-0xff) in a value reads as latin1', answer: ok('', 'X-Latin: caf\xe9 \xff\x80\r\n'), want: { status: 200, body: '', headers: { 'x-latin': 'caf\xe9 \xff\x80' } } },
  { name: 'a 10 KB header value', answer: ok('', `X-Long: ${'v'.repeat(10_000)}\r\n`), want: { status: 200, body: '', headers: { 'x-long': 'v'.repeat(10_000) } } },
  { name: 'header names such as constructor and __proto__', answer: ok('', 'Constructor: c\r\n__proto__: p\r\n'), want: { status: 200, body: '', headers: { constructor: 'c', ['__proto__']: 'p' } } },

  // lenient or malformed framing where the two readers may part
  {
    name: 'the same Content-Length twice',
    answer: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello',
    want: { status: 200, body: 'hello', headers: { 'content-length': ['5', '5'] } },
    undici: { want: { rejects: true }, why: 'llhttp refuses any second Content-Length (HPE_UNEXPECTED_CONTENT_LENGTH); RFC 9110 8.6 lets a recipient take identical values as one' },
  },
  {
    name: 'Content-Length and Transfer-Encoding: chunked both (chunked wins)',
    answer: 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    want: { status: 200, body: 'hello' },
    undici: { want: { rejects: true }, why: 'llhttp refuses the pair outright; RFC 9112 6.3: Transfer-Encoding overrides, and the lean client does not reuse the connection' },
  },
  {
    name: 'Transfer-Encoding: chunked in an HTTP/1.0 answer',
    answer: 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    want: { rejects: true },
    undici: { want: { status: 200, body: 'hello' }, why: 'llhttp decodes chunked in HTTP/1.0; the lean client refuses it (RFC 9112 6.1: a 1.0 recipient cannot know chunked)' },
  },
  {
    name: 'Transfer-Encoding: chunked, chunked',
    answer: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    want: { rejects: true },
    undici: { want: { status: 200, body: 'hello' }, why: 'llhttp decodes it once; RFC 9112 6.1: chunked is never applied twice' },
  },
  {
    name: 'a chunk size with 14 hex digits (leading zeros)',
    answer: `${CHUNKED}\r\n00000000000005\r\nhello\r\n0\r\n\r\n`,
    want: { bodyFails: '' },
    undici: { want: { status: 200, body: 'hello' }, why: 'llhttp takes any number of leading zeros; the lean client caps a chunk size at 13 hex digits, zeros included' },
  },
  {
    name: 'whitespace between the chunk size and the CR LF',
    answer: `${CHUNKED}\r\n5 \r\nhello\r\n0\r\n\r\n`,
    want: { status: 200, body: 'hello' },
    undici: { want: { bodyFails: '' }, why: 'llhttp refuses it (HPE_INVALID_CHUNK_SIZE); the lean client trims whitespace around the size' },
  },
  {
    name: 'a 20 KB head (under the lean client\'s 64 KB)',
    answer: ok('big', `X-Big: ${'b'.repeat(20_000)}\r\n`),
    want: { status: 200, body: 'big' },
    undici: { want: { rejects: true }, why: 'undici caps a head at 16 KB (UND_ERR_HEADERS_OVERFLOW), the lean client at 64 KB' },
  },

  // malformed: the lean client refuses (rejects, or fails the body), undici too unless noted
  { name: 'status line without a code', answer: 'HTTP/1.1 OK\r\nContent-Length: 0\r\n\r\n', want: { rejects: true } },
  { name: 'not HTTP at all', answer: 'HTTX/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', want: { rejects: true } },
  {
    name: 'HTTP/2.0 in the status line',
    answer: 'HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n',
    want: { rejects: true },
    undici: { want: { status: 200, body: '' }, why: 'llhttp takes any one-digit major version; an HTTP/1.1 connection answered as 2.0 is not HTTP/1.1' },
  },
  { name: 'a four-digit status', answer: 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n', want: { rejects: true } },
  { name: 'a lower-case protocol name', answer: 'http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', want: { rejects: true } },
  {
    name: 'an empty line before the status line',
    answer: `\r\n${ok('ok')}`,
    want: { rejects: true },
    undici: { want: { status: 200, body: 'ok' }, why: 'llhttp skips CR LF before a message; RFC 9112 2.2 allows that for a request line only' },
  },
  { name: 'an empty header name', answer: 'HTTP/1.1 200 OK\r\n: v\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a header name with a non-token byte', answer: 'HTTP/1.1 200 OK\r\nX/Bad: v\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a header name with an obs-text byte', answer: 'HTTP/1.1 200 OK\r\nX-Caf\xe9: v\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a header line without a colon', answer: 'HTTP/1.1 200 OK\r\nX-NoColon\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'obs-fold continuation line', answer: 'HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a space before the colon', answer: 'HTTP/1.1 200 OK\r\nX-Foo : bar\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a NUL in a header value', answer: 'HTTP/1.1 200 OK\r\nX-Nul: a\x00b\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'a bare CR in a header value', answer: 'HTTP/1.1 200 OK\r\nX-Cr: a\rb\r\nContent-Length: 2\r\n\r\nok', want: { rejects: true } },
  { name: 'bare LF line ends', answer: 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok', close: true, want: { rejects: true } },
  { name: 'two different Content-Length values', answer: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!', want: { rejects: true } },
  { name: 'Content-Length not a number', answer: 'HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nabc', want: { rejects: true } },
  { name: 'a negative Content-Length', answer: 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc', want: { rejects: true } },
  { name: '101 Switching Protocols nobody asked for', answer: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n', want: { rejects: true } },
  { name: 'a head over 64 KB', answer: ok('big', `X-Big: ${'b'.repeat(70_000)}\r\n`), want: { rejects: true } },
  { name: 'the server closes mid-head', answer: 'HTTP/1.1 200 OK\r\nContent-Le', close: true, want: { rejects: true } },
  { name: 'the server closes without answering', answer: '', close: true, want: { rejects: true } },
  { name: 'a bad chunk size (zz)', answer: `${CHUNKED}\r\nzz\r\nhello\r\n0\r\n\r\n`, want: { bodyFails: '' } },
  { name: 'a chunk longer than its size', answer: `${CHUNKED}\r\n3\r\nhello\r\n0\r\n\r\n`, want: { bodyFails: 'hel' } },
  { name: 'a bare LF after a chunk size', answer: `${CHUNKED}\r\n5\nhello\r\n0\r\n\r\n`, want: { bodyFails: '' } },
  { name: 'a chunk size that overflows', answer: `${CHUNKED}\r\nfffffffffffffffffff\r\nhello\r\n0\r\n\r\n`, want: { bodyFails: '' } },
  { name: 'chunked, the CR LF after the last chunk missing at the close', answer: `${CHUNKED}\r\n5\r\nhello\r\n0\r\n`, close: true, want: { bodyFails: 'hello' } },
  { name: 'a bare LF in the trailers', answer: `${CHUNKED}\r\n5\r\nhello\r\n0\r\nX-T: 1\n\r\n`, want: { bodyFails: 'hello' } },
  { name: 'chunked, cut before the last chunk', answer: `${CHUNKED}\r\n5\r\nhello\r\n5\r\nwor`, close: true, want: { bodyFails: 'hellowor' } },
  { name: 'Content-Length mismatch: the server closes early', answer: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello', close: true, want: { bodyFails: 'hello' } },
];

async function exchange(t: Test, c: Case, delivery: Delivery, lean: boolean): Promise<Outcome> {
  const bytes = Buffer.from(c.answer, 'latin1');
  const server = await rawServer(t, async (socket) => {
    await deliver(socket, bytes, delivery);
    if (c.close) socket.end();
  });
  // A 20 KB head written a byte per turn of the event loop takes over 1.5 s on a loaded 2-core
  // machine: split deliveries get 10 s to the head (no case here waits on a timeout).
  const outcome = await call(lean, `${server.url}/case`, { method: c.method ?? 'GET', timeoutMs: delivery === 'whole' ? 1500 : 10_000 });
  server.close();
  return outcome;
}

/** Checks an outcome against what the case wants; a resolved body is never other than the framed one. */
function meets(t: Test, got: Outcome, want: Want, label: string): void {
  if ('rejects' in want) {
    t.equal(got.settled, 'rejected', `${label}: rejects`, { got });
  } else if ('bodyFails' in want) {
    t.equal(got.settled, 'resolved', `${label}: the head resolves`, { got });
    t.equal(got.ended, 'error', `${label}: the body fails`, { got });
    t.ok(want.bodyFails.startsWith(got.body ?? ''), `${label}: what was read is a prefix of the framed body`, { got });
  } else {
    t.equal(got.settled, 'resolved', `${label}: resolves`, { got });
    t.equal(got.status, want.status, `${label}: status`);
    t.equal(got.ended, 'end', `${label}: the body ends normally`, { got });
    t.equal(got.body, want.body, `${label}: body bytes`);
    for (const [name, value] of Object.entries(want.headers ?? {})) t.strictSame(got.headers?.[name], value, `${label}: header ${name}`);
    for (const name of want.absent ?? []) t.notOk(Object.hasOwn(got.headers ?? {}, name), `${label}: no ${name} header`);
  }
}

// ---- 1. differential against undici

t.test('differential: each raw answer reads the same through the lean client and undici', async (t) => {
  for (const c of CASES) {
    t.test(c.name, async (t) => {
      const lean = await exchange(t, c, 'whole', true);
      const undici = await exchange(t, c, 'whole', false);
      meets(t, lean, c.want, 'lean');
      if (c.undici) {
        // A known difference: both behaviours pinned, the reason in the case.
        meets(t, undici, c.undici.want, `undici (${c.undici.why})`);
      } else {
        meets(t, undici, c.want, 'undici');
        t.strictSame(comparable(lean), comparable(undici), 'lean = undici: settled, status, headers, body, ending');
      }
    });
  }
});

// ---- 2. byte-at-a-time and split reads

t.test('the same answers written one byte per write, or in uneven pieces, read as when written at once', async (t) => {
  for (const c of CASES) {
    t.test(c.name, async (t) => {
      const whole = await exchange(t, c, 'whole', true);
      for (const delivery of ['bytewise', 'pieces'] as const) {
        const split = await exchange(t, c, delivery, true);
        meets(t, split, c.want, delivery);
        t.strictSame(comparable(split), comparable(whole), `${delivery} = whole`);
      }
    });
  }
});

// ---- 3. keep-alive reuse

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: sequential requests reuse one connection`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      socket.write(ok(`answer ${server.requests.indexOf(request)}`));
    });
    for (let i = 0; i < 5; i++) {
      const got = await call(lean, `${server.url}/seq`);
      t.equal(got.body, `answer ${i}`);
      await idle(lean);
    }
    // chunked answers too, and one read only through resume() (discarded: the connection stays usable)
    const chunkedServer = await rawServer(t, (socket) => socket.write(`${CHUNKED}\r\n2\r\nhi\r\n0\r\n\r\n`));
    useLeanUpstreamClient(lean);
    const discarded = await sendUpstream(`${chunkedServer.url}/x`, { method: 'GET', headers: {}, timeoutMs: 1500 });
    useLeanUpstreamClient(true);
    discarded.body.resume();
    await until(() => chunkedServer.requests.length === 1, 'the first request');
    await sleep(20);
    for (let i = 0; i < 3; i++) {
      t.equal((await call(lean, `${chunkedServer.url}/x`)).body, 'hi');
      await idle(lean);
    }
    t.equal(server.connections(), 1, 'five Content-Length answers on one connection');
    t.equal(chunkedServer.connections(), 1, 'four chunked answers on one connection, one of them discarded');
  });

  t.test(`${name}: an answer with Connection: close is not reused`, async (t) => {
    // The server keeps its side open: only the client's reading of the header closes it.
    const server = await rawServer(t, (socket) => socket.write(ok('bye', 'Connection: close\r\n')));
    t.equal((await call(lean, `${server.url}/a`)).body, 'bye');
    await idle(lean);
    t.equal((await call(lean, `${server.url}/b`)).body, 'bye');
    t.equal(server.connections(), 2, 'a new connection for the second request');
    await within(server.closed(0), 1000, 'the client closes the first connection');
  });

  t.test(`${name}: an HTTP/1.0 answer is not reused`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    t.equal((await call(lean, `${server.url}/a`)).body, 'ok');
    await idle(lean);
    t.equal((await call(lean, `${server.url}/b`)).body, 'ok');
    t.equal(server.connections(), 2);
  });

  t.test(`${name}: close among other Connection tokens, in any case, is not reused`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('bye', 'Connection: keep-alive, Close\r\n')));
    t.equal((await call(lean, `${server.url}/a`)).body, 'bye');
    await idle(lean);
    t.equal((await call(lean, `${server.url}/b`)).body, 'bye');
    t.equal(server.connections(), 2);
  });

  t.test(`${name}: answers without a body (HEAD, 204, 304) leave the next answer intact; a HEAD's connection is not reused`, async (t) => {
    const answers = [
      'HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n',
      'HTTP/1.1 204 No Content\r\n\r\n',
      'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n',
      ok('after'),
    ];
    const server = await rawServer(t, (socket, request) => socket.write(answers[server.requests.indexOf(request)]!));
    const head = await call(lean, `${server.url}/h`, { method: 'HEAD' });
    t.strictSame([head.status, head.body, head.headers?.['content-length']], [200, '', '42']);
    await idle(lean);
    t.strictSame([(await call(lean, `${server.url}/n`)).status, (await idle(lean), (await call(lean, `${server.url}/m`)).status)], [204, 304]);
    await idle(lean);
    t.equal((await call(lean, `${server.url}/after`)).body, 'after');
    // Neither client reuses a connection after a HEAD (undici issue 258: servers that send a body
    // with it); 204, 304 and the GET share the second one.
    t.equal(server.connections(), 2);
  });

  t.test(`${name}: a HEAD answered with a body: those bytes never become the next answer`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      const n = server.requests.indexOf(request);
      socket.write(n === 0 ? 'HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\nHTTP/1.1 200 OK\r\n\r\nfake' : ok(`answer ${n}`));
    });
    const head = await call(lean, `${server.url}/h`, { method: 'HEAD' });
    t.equal(head.body, '');
    await within(server.closed(0), 1000, 'the connection with the stray body is closed');
    t.equal((await call(lean, `${server.url}/g`)).body, 'answer 1');
  });

  // The same, with the body coming a little after the head: it can only be told from the next
  // answer by not reusing the connection after a HEAD, which both clients do.
  t.test(`${name}: a HEAD answered with a late body: those bytes never become the next answer`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      const n = server.requests.indexOf(request);
      if (n === 0) {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n');
        setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfake'), 30);
      } else {
        setTimeout(() => socket.write(ok(`answer ${n}`)), 100);
      }
    });
    t.equal((await call(lean, `${server.url}/h`, { method: 'HEAD' })).body, '');
    await idle(lean);
    t.equal((await call(lean, `${server.url}/g`)).body, 'answer 1', 'the GET gets its own answer');
  });
}

t.test('lean: bytes past a complete answer never reach the next request; that connection is closed', async (t) => {
  // The server answers the first request twice in one write: the second answer is stray.
  const server = await rawServer(t, (socket, request) => {
    const n = server.requests.indexOf(request);
    socket.write(n === 0 ? ok('first') + ok('stray') : ok(`answer ${n}`));
  });
  t.equal((await call(true, `${server.url}/one`)).body, 'first');
  await within(server.closed(0), 1000, 'the connection with stray bytes is closed');
  t.equal((await call(true, `${server.url}/two`)).body, 'answer 1', 'the next request gets its own answer');
  t.equal(server.connections(), 2);
  t.equal(server.requests[1]!.connection, 1, 'sent on a new connection');
});

t.test('lean: stray bytes on an idle connection close it', async (t) => {
  // Stray bytes that come later, while the connection sits idle in the pool.
  const server = await rawServer(t, (socket, request) => {
    const n = server.requests.indexOf(request);
    socket.write(ok(`answer ${n}`));
    if (n === 0) setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray'), 20);
  });
  t.equal((await call(true, `${server.url}/one`)).body, 'answer 0');
  await within(server.closed(0), 1000, 'the idle connection that got stray bytes is closed');
  t.equal((await call(true, `${server.url}/two`)).body, 'answer 1');
  t.equal(server.connections(), 2);
});

t.test('undici: bytes past a complete answer never reach the next request', async (t) => {
  const server = await rawServer(t, (socket, request) => {
    const n = server.requests.indexOf(request);
    socket.write(n === 0 ? ok('first') + ok('stray') : ok(`answer ${n}`));
  });
  t.equal((await call(false, `${server.url}/one`)).body, 'first');
  await within(server.closed(0), 1000, 'the connection with stray bytes is closed');
  t.equal((await call(false, `${server.url}/two`)).body, 'answer 1');
});

// ---- 4. keep-alive race and Keep-Alive hints

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: the server closing an idle kept-alive connection is seen; the next request opens another`, async (t) => {
    const server = await rawServer(t, (socket) => {
      socket.write(ok('ok'));
      setTimeout(() => socket.end(), 10); // no Connection: close, the server just leaves
    });
    t.equal((await call(lean, `${server.url}/a`)).body, 'ok');
    await within(server.closed(0), 1000, 'the server side closed');
    await sleep(30); // the client sees the FIN before it sends
    const second = await call(lean, `${server.url}/b`);
    t.equal(second.settled, 'resolved', 'the second request succeeds');
    t.equal(second.body, 'ok');
    t.equal(server.connections(), 2);
  });

  t.test(`${name}: a kept-alive connection dropped as the request goes out fails the request, no hang`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      if (request.connection === 0 && server.requests.filter((r) => r.connection === 0).length === 2) socket.destroy();
      else socket.write(ok('ok'));
    });
    t.equal((await call(lean, `${server.url}/a`)).body, 'ok');
    await idle(lean);
    const second = await within(call(lean, `${server.url}/b`), 1200, 'the dropped request settles');
    t.equal(second.settled, 'rejected');
    t.equal(second.code, 'UND_ERR_SOCKET');
    t.equal((await call(lean, `${server.url}/c`)).body, 'ok', 'the pool goes on with a new connection');
  });

  t.test(`${name}: Keep-Alive: timeout=1 is not reused after 1.2 s idle`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('ok', 'Keep-Alive: timeout=1\r\n')));
    t.equal((await call(lean, `${server.url}/a`)).body, 'ok');
    await sleep(1200);
    t.equal((await call(lean, `${server.url}/b`)).body, 'ok');
    t.equal(server.connections(), 2, 'a new connection: the hinted idle time (less the margin) ran out');
  });

  t.test(`${name}: Keep-Alive: timeout=5 is reused after 100 ms idle`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('ok', 'Keep-Alive: timeout=5, max=100\r\n')));
    t.equal((await call(lean, `${server.url}/a`)).body, 'ok');
    await sleep(100);
    t.equal((await call(lean, `${server.url}/b`)).body, 'ok');
    t.equal(server.connections(), 1);
  });
}

t.test('lean: Keep-Alive: timeout=2 keeps a connection 1 s (the hint less the 1 s margin)', async (t) => {
  const server = await rawServer(t, (socket) => socket.write(ok('ok', 'Keep-Alive: timeout=2\r\n')));
  t.equal((await call(true, `${server.url}/a`)).body, 'ok');
  await sleep(500);
  t.equal((await call(true, `${server.url}/b`)).body, 'ok');
  t.equal(server.connections(), 1, 'reused 0.5 s later');
  await sleep(1200);
  t.equal((await call(true, `${server.url}/c`)).body, 'ok');
  t.equal(server.connections(), 2, 'not reused 1.2 s after the last answer');
});

t.test('lean: Keep-Alive: timeout=1 less the 1 s margin leaves no idle time at all', async (t) => {
  const server = await rawServer(t, (socket) => socket.write(ok('ok', 'Keep-Alive: timeout=1\r\n')));
  t.equal((await call(true, `${server.url}/a`)).body, 'ok');
  await sleep(5);
  t.equal((await call(true, `${server.url}/b`)).body, 'ok');
  t.equal(server.connections(), 2, 'even an immediate next request opens a new connection');
});

// ---- 5. timeouts

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: no answer: the headers timeout rejects`, async (t) => {
    const server = await rawServer(t, () => {});
    const started = Date.now();
    const got = await within(call(lean, `${server.url}/silent`, { timeoutMs: 300 }), 1500, 'the headers timeout');
    const took = Date.now() - started;
    t.equal(got.settled, 'rejected');
    t.equal(got.code, 'UND_ERR_HEADERS_TIMEOUT');
    // The lean sweep runs every 250 ms; undici's timers for short timeouts tick about once a second.
    t.ok(took >= 250 && took < (lean ? 1000 : 2000), `rejected after ${took} ms (timeout 300)`);
    await within(server.closed(0), 1000, 'the connection is closed');
  });

  t.test(`${name}: the head, then a stall: the body timeout fails the body`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(`${CHUNKED}\r\n5\r\nhello\r\n`));
    const got = await within(call(lean, `${server.url}/stall`, { timeoutMs: 300 }), 1500, 'the body timeout');
    t.equal(got.settled, 'resolved');
    t.equal(got.body, 'hello', 'what came before the stall is read');
    t.equal(got.ended, 'error');
    t.equal(got.code, 'UND_ERR_BODY_TIMEOUT');
    await within(server.closed(0), 1000, 'the connection is closed');
  });

  t.test(`${name}: a body that trickles faster than the timeout completes`, async (t) => {
    const server = await rawServer(t, async (socket) => {
      socket.write(`${CHUNKED}\r\n`);
      for (let i = 0; i < 6; i++) {
        await sleep(120);
        socket.write(`1\r\n${i}\r\n`);
      }
      socket.write('0\r\n\r\n');
    });
    const got = await call(lean, `${server.url}/trickle`, { timeoutMs: 300 });
    t.equal(got.ended, 'end', 'the body timeout runs between reads, not over the whole body');
    t.equal(got.body, '012345');
  });
}

// ---- 6. cancellation

/** An onAbort option that can be fired, and tells whether it was unsubscribed. */
function abortHook() {
  const hook = {
    fire: () => {},
    unsubscribed: false,
    onAbort: (fn: () => void) => {
      hook.fire = fn;
      return () => { hook.unsubscribed = true; };
    },
  };
  return hook;
}

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: onAbort before the head rejects, and the connection is closed`, async (t) => {
    const server = await rawServer(t, () => {});
    const hook = abortHook();
    const pending = call(lean, `${server.url}/wait`, { onAbort: hook.onAbort, timeoutMs: 5000 });
    await until(() => server.requests.length === 1, 'the request arrives');
    hook.fire();
    const got = await within(pending, 500, 'the abort');
    t.equal(got.settled, 'rejected');
    t.equal(got.code, 'UND_ERR_ABORTED');
    await within(server.closed(0), 1000, 'the server sees the connection closed');
  });

  t.test(`${name}: an AbortSignal before the head rejects with its reason`, async (t) => {
    const server = await rawServer(t, () => {});
    const controller = new AbortController();
    useLeanUpstreamClient(lean);
    const pending = sendUpstream(`${server.url}/wait`, { method: 'GET', headers: {}, timeoutMs: 5000, signal: controller.signal });
    useLeanUpstreamClient(true);
    await until(() => server.requests.length === 1, 'the request arrives');
    const reason = new Error('the caller left');
    controller.abort(reason);
    await t.rejects(within(pending, 500, 'the abort'), reason);
    await within(server.closed(0), 1000, 'the server sees the connection closed');
  });

  t.test(`${name}: onAbort mid-body fails the body iteration, and the connection is closed`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(`${CHUNKED}\r\n5\r\nhello\r\n`));
    const hook = abortHook();
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/stream`, { method: 'GET', headers: {}, timeoutMs: 5000, onAbort: hook.onAbort });
    useLeanUpstreamClient(true);
    const iterator = res.body[Symbol.asyncIterator]();
    t.equal((await iterator.next()).value?.toString(), 'hello');
    const next = iterator.next();
    hook.fire();
    await t.rejects(within(next, 500, 'the body fails'), { code: 'UND_ERR_ABORTED' });
    await within(server.closed(0), 1000, 'the server sees the connection closed');
  });

  t.test(`${name}: an AbortSignal mid-body fails the body iteration`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(`${CHUNKED}\r\n5\r\nhello\r\n`));
    const controller = new AbortController();
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/stream`, { method: 'GET', headers: {}, timeoutMs: 5000, signal: controller.signal });
    useLeanUpstreamClient(true);
    const chunks: string[] = [];
    const reading = (async () => { for await (const chunk of res.body) { chunks.push(chunk.toString()); controller.abort(); } })();
    await t.rejects(within(reading, 500, 'the body fails'), { name: 'AbortError' });
    t.same(chunks, ['hello']);
    await within(server.closed(0), 1000, 'the server sees the connection closed');
  });

  t.test(`${name}: an already-aborted signal rejects at once`, async (t) => {
    const server = await rawServer(t, () => {});
    const got = await within(call(lean, `${server.url}/never`, { signal: AbortSignal.abort() }), 200, 'the rejection');
    t.equal(got.settled, 'rejected');
    t.equal(got.code, 'AbortError');
    if (lean) t.equal(server.connections(), 0, 'lean: no connection is opened for it');
  });

  t.test(`${name}: onAbort is unsubscribed once the answer ended; a late fire changes nothing`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('done')));
    const hook = abortHook();
    const got = await call(lean, `${server.url}/x`, { onAbort: hook.onAbort });
    t.equal(got.body, 'done');
    t.ok(hook.unsubscribed, 'unsubscribed');
    hook.fire();
    await idle(lean);
    t.equal((await call(lean, `${server.url}/y`)).body, 'done', 'the connection was not closed by the late fire');
    t.equal(server.connections(), 1);
  });
}

// ---- 7. concurrency: no answer goes to the wrong caller

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: 50 concurrent requests each get their own answer`, async (t) => {
    let seed = 1;
    const server = await rawServer(t, async (socket, request) => {
      const id = /\r\nx-request-id: *(\S+)/i.exec(request.head)![1]!;
      seed = (seed * 48271) % 2147483647;
      await sleep(seed % 20); // answers come back in a different order than asked
      const body = `id:${id}`;
      socket.write(Number(id) % 2 === 0 ? ok(body) : `${CHUNKED}\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    });
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
        call(lean, `${server.url}/c`, { headers: { 'x-request-id': String(round * 100 + i) } })));
      t.strictSame(results.map((r) => r.body), Array.from({ length: 50 }, (_, i) => `id:${round * 100 + i}`), `round ${round}`);
    }
    if (lean) t.ok(server.connections() <= 50, `${server.connections()} connections for 100 requests: the second round reused the first's`);
  });
}

t.test('lean: past 256 connections requests wait; a waiting one can be aborted', async (t) => {
  let release = false;
  const held: Array<() => void> = [];
  const server = await rawServer(t, (socket, request) => {
    const answer = () => socket.write(ok(`id:${/\r\nx-request-id: *(\S+)/i.exec(request.head)![1]}`));
    if (release) answer();
    else held.push(answer);
  });
  const hook = abortHook();
  const pending = Array.from({ length: 258 }, (_, i) => call(true, `${server.url}/q`, {
    headers: { 'x-request-id': String(i) },
    timeoutMs: 10_000,
    ...(i === 257 ? { onAbort: hook.onAbort } : {}),
  }));
  await until(() => server.requests.length === 256, '256 requests arrive', 5000);
  await sleep(50);
  t.equal(server.connections(), 256, 'no more than 256 connections');
  t.equal(server.requests.length, 256, 'two wait');
  hook.fire();
  const aborted = await within(pending[257]!, 500, 'the waiting request aborts');
  t.equal(aborted.code, 'UND_ERR_ABORTED');
  release = true;
  for (const answer of held.splice(0)) answer();
  const results = await Promise.all(pending.slice(0, 257));
  t.strictSame(results.map((r) => r.body), Array.from({ length: 257 }, (_, i) => `id:${i}`), 'every answer to its own caller');
  t.equal(server.requests.length, 257, 'the aborted one was never sent');
  t.equal(server.connections(), 256, 'the waiting one went out on a freed connection');
});

// ---- 8. backpressure

const BIG = Buffer.alloc(4 * 1024 * 1024);
for (let i = 0; i < BIG.length; i++) BIG[i] = (i * 7 + (i >> 12)) & 0xff;

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: a 4 MB body read slowly arrives complete and equal`, async (t) => {
    const server = await rawServer(t, (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG.length}\r\n\r\n`);
      socket.write(BIG);
    });
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/big`, { method: 'GET', headers: {}, timeoutMs: 10_000 });
    useLeanUpstreamClient(true);
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) {
      chunks.push(chunk);
      await sleep(3);
    }
    const got = Buffer.concat(chunks);
    t.equal(got.length, BIG.length);
    t.ok(got.equals(BIG), 'every byte equal');
    t.ok(chunks.length > 4, `read in ${chunks.length} pieces`);
    t.equal((await call(lean, `${server.url}/after`)).settled, 'resolved');
  });

  t.test(`${name}: resume() on a paused 4 MB body discards the rest; the connection is reused`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      if (server.requests.indexOf(request) > 0) return socket.write(ok('next'));
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG.length}\r\n\r\n`);
      socket.write(BIG);
    });
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/big`, { method: 'GET', headers: {}, timeoutMs: 10_000 });
    useLeanUpstreamClient(true);
    await sleep(50); // the queue fills past its high-water mark: the socket is paused
    res.body.resume();
    await sleep(200);
    t.equal((await call(lean, `${server.url}/next`)).body, 'next');
    t.equal(server.connections(), 1, 'the discarded body was read to its end, the connection kept');
  });

  t.test(`${name}: destroy() mid-body closes the connection; the next request gets a new one`, async (t) => {
    const server = await rawServer(t, (socket, request) => {
      socket.write(server.requests.indexOf(request) === 0 ? `${CHUNKED}\r\n5\r\nhello\r\n` : ok('fresh'));
    });
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/s`, { method: 'GET', headers: {}, timeoutMs: 5000 });
    useLeanUpstreamClient(true);
    for await (const chunk of res.body) {
      t.equal(chunk.toString(), 'hello');
      break; // return() destroys the body
    }
    await within(server.closed(0), 1000, 'the server sees the connection closed');
    t.equal((await call(lean, `${server.url}/next`)).body, 'fresh');
    t.equal(server.connections(), 2);
  });

  // The body timeout bounds the upstream's silence, not the reader's: undici does not run it while
  // it has paused the socket for backpressure (client-h1 onParserTimeout: `if (!paused)`).
  t.test(`${name}: a reader slower than the timeout, with the socket paused, is not timed out`, async (t) => {
    const server = await rawServer(t, (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG.length}\r\n\r\n`);
      socket.write(BIG);
    });
    useLeanUpstreamClient(lean);
    const res = await sendUpstream(`${server.url}/big`, { method: 'GET', headers: {}, timeoutMs: 300 });
    useLeanUpstreamClient(true);
    const chunks: Buffer[] = [];
    let failure: unknown = null;
    try {
      for await (const chunk of res.body) {
        chunks.push(chunk);
        if (chunks.length === 1) await sleep(900); // the queue fills, the socket pauses
      }
    } catch (err) {
      failure = err;
    }
    t.equal(failure, null, 'the body ends normally');
    t.ok(Buffer.concat(chunks).equals(BIG), 'every byte equal');
  });
}

// ---- 9. request writing

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: the request as written on the wire`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('ok')));
    const body = 'héllo wörld ✓ 🙂';
    const got = await call(lean, `${server.url}/path?x=1`, {
      method: 'POST',
      headers: { 'X-Custom': 'yes', authorization: 'Bearer k', 'x-latin': 'caf\xe9' },
      body,
    });
    t.equal(got.body, 'ok');
    const request = server.requests[0]!;
    const [requestLine, ...lines] = request.head.split('\r\n');
    t.equal(requestLine, 'POST /path?x=1 HTTP/1.1');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    t.equal(headers.host, `127.0.0.1:${server.port}`, 'host with the port');
    t.equal(headers['content-length'], String(Buffer.byteLength(body)), 'content-length in UTF-8 bytes');
    t.not(Buffer.byteLength(body), body.length);
    t.equal(headers['x-custom'], 'yes');
    t.equal(headers.authorization, 'Bearer k');
    t.equal(headers['x-latin'], 'caf\xe9', 'a latin1 value goes out as its byte');
    t.ok(request.body.equals(Buffer.from(body, 'utf8')), 'the body, UTF-8');
  });

  t.test(`${name}: a header value with CR LF rejects before anything is written`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('ok')));
    t.equal((await call(lean, `${server.url}/first`)).body, 'ok'); // an idle connection, ready to write on
    await idle(lean);
    const written = server.bytes[0]!.length;
    const got = await call(lean, `${server.url}/x`, { headers: { 'x-evil': 'a\r\nx-injected: 1' } });
    t.equal(got.settled, 'rejected');
    t.equal(got.code, 'UND_ERR_INVALID_ARG');
    const bad = await call(lean, `${server.url}/x`, { headers: { 'bad name': 'v' } });
    t.equal(bad.code, 'UND_ERR_INVALID_ARG', 'a header name that is not a token');
    await sleep(50);
    t.equal(server.bytes[0]!.length, written, 'not a byte more on the idle connection');
    t.equal(server.connections(), 1, 'no connection opened for them');
    t.equal((await call(lean, `${server.url}/x`)).body, 'ok', 'the pool still works');
    // (undici's pool, after such a refusal, opens a new connection for the next request.)
    if (lean) t.equal(server.connections(), 1, 'on the same connection');
  });

  t.test(`${name}: a GET without a body sends no content-length; a POST without one sends 0`, async (t) => {
    const server = await rawServer(t, (socket) => socket.write(ok('ok')));
    await call(lean, `${server.url}/g`, { method: 'GET' });
    await call(lean, `${server.url}/p`, { method: 'POST' });
    t.notMatch(server.requests[0]!.head, /content-length/i);
    t.match(server.requests[1]!.head, /\r\ncontent-length: 0(\r\n|$)/i);
  });
}

t.test('a Connection header from the caller: keep-alive is left out of the head (both clients); the lean client refuses other values', async (t) => {
  const server = await rawServer(t, (socket) => socket.write(ok('ok')));
  for (const [name, lean] of CLIENTS) {
    t.equal((await call(lean, `${server.url}/x`, { headers: { connection: 'keep-alive' } })).body, 'ok', `${name}: keep-alive`);
    t.equal((server.requests.at(-1)!.head.match(/\r\nconnection:/gi) ?? []).length, 1, `${name}: one Connection header, the client's own`);
  }
  t.equal((await call(true, `${server.url}/x`, { headers: { connection: 'upgrade' } })).code, 'UND_ERR_INVALID_ARG', 'lean: connection: upgrade');
});

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: an IPv6 literal: bare for the socket, bracketed in the Host header`, async (t) => {
    const probe = createServer();
    const usable = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(0, '::1', () => resolve(true));
    });
    probe.close();
    if (!usable) return void t.pass('skipped: no IPv6 loopback here');
    const server = await rawServer(t, (socket) => socket.write(ok('v6')), '::1');
    t.equal((await call(lean, `${server.url}/six`)).body, 'v6');
    t.match(server.requests[0]!.head, new RegExp(`\\r\\nhost: \\[::1\\]:${server.port}\\r\\n`, 'i'));
  });
}

// ---- 10. connection refused

for (const [name, lean] of CLIENTS) {
  t.test(`${name}: a closed port rejects with ECONNREFUSED`, async (t) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    await once(probe, 'close');
    const got = await within(call(lean, `http://127.0.0.1:${port}/x`), 2000, 'the refusal');
    t.equal(got.settled, 'rejected');
    t.equal(got.code, 'ECONNREFUSED');
  });
}
