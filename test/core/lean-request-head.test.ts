// The lean server's request-head reader: what it accepts, what it hands to Node's server, and, for
// everything it accepts, that Node's own parser reads the same method, URL, headers and body length
// from the same bytes (a head read two ways is where request smuggling lives).
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import t from 'tap';
import { MAX_HEADERS, readRequestHead, type RequestHead } from '../../core/http/lean/request-head.ts';

const LIMIT = 16 * 1024;
const read = (text: string) => readRequestHead(Buffer.from(text, 'latin1'), LIMIT);
const plain = (extra = '') => `POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 12\r\n${extra}\r\n`;

t.test('a plain POST head: names lower-cased, values trimmed, the body length, keep-alive', async (t) => {
  const head = read(`${plain('X-Pad:   spaced value \t\r\n')}{"model":"m"}`) as RequestHead;
  t.equal(head.url, '/v1/chat/completions?x=1');
  t.same({ ...head.headers }, { host: 'relay', 'content-type': 'application/json', 'content-length': '12', 'x-pad': 'spaced value' });
  t.equal(Object.getPrototypeOf(head.headers), null, 'a header named __proto__ is only a header');
  t.equal(head.bodyLength, 12);
  t.equal(head.keepAlive, true);
  t.equal(head.headEnd, Buffer.byteLength(plain('X-Pad:   spaced value \t\r\n')));
  t.equal((read('POST / HTTP/1.1\r\nHost: a\r\n\r\n') as RequestHead).bodyLength, 0, 'no Content-Length: no body');
  t.equal((read(plain('Connection: keep-alive, close\r\n')) as RequestHead).keepAlive, false);
  t.equal((read(plain('Connection: Close\r\n')) as RequestHead).keepAlive, false);
  t.equal((read(plain('Connection: closed\r\n')) as RequestHead).keepAlive, true, 'only the token close');
  t.equal((read(plain('__proto__: x\r\n')) as RequestHead).headers.__proto__, 'x');
  t.equal((read(plain('X-Latin: caf\u00e9\r\n')) as RequestHead).headers['x-latin'], 'caf\u00e9', 'obs-text read as latin1, as Node does');
});

t.test('incomplete until the blank line, however the bytes are cut', async (t) => {
  const text = plain();
  for (let cut = 0; cut < text.length; cut++) t.equal(read(text.slice(0, cut)), 'incomplete', `cut at ${cut}`);
  t.type(read(text), 'object');
});

t.test('handed over to Node: every form this reader does not take', async (t) => {
  const cases: Record<string, string> = {
    'GET': 'GET / HTTP/1.1\r\nHost: a\r\n\r\n',
    'post in lower case': 'post / HTTP/1.1\r\nHost: a\r\n\r\n',
    'HTTP/1.0': 'POST / HTTP/1.0\r\nHost: a\r\n\r\n',
    'HTTP/2 preface': 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    'absolute-form target': 'POST http://a/v1 HTTP/1.1\r\nHost: a\r\n\r\n',
    'asterisk target': 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n',
    'two spaces': 'POST  / HTTP/1.1\r\nHost: a\r\n\r\n',
    'a control byte in the target': 'POST /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n',
    'non-ASCII in the target': 'POST /caf\u00e9 HTTP/1.1\r\nHost: a\r\n\r\n',
    'lower-case version': 'POST / http/1.1\r\nHost: a\r\n\r\n',
    'bare LF, complete': 'POST / HTTP/1.1\nHost: a\n\n',
    'bare LF, incomplete': 'POST / HTTP/1.1\nHost: a\n',
    'GET, incomplete': 'GET / HTTP/1.1\r\nHo',
    'not HTTP at all (a TLS hello), incomplete': '\x16\x03\x01\x02\x00\x01',
    'bare LF inside CRLF lines': 'POST / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n',
    'CR alone in a value': 'POST / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n',
    'obs-fold': 'POST / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n',
    'space before the colon': 'POST / HTTP/1.1\r\nHost : a\r\n\r\n',
    'empty name': 'POST / HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n',
    'NUL in a value': 'POST / HTTP/1.1\r\nHost: a\r\nX: b\x00c\r\n\r\n',
    'DEL in a value': 'POST / HTTP/1.1\r\nHost: a\r\nX: b\x7fc\r\n\r\n',
    'a repeated header': 'POST / HTTP/1.1\r\nHost: a\r\nAccept: x\r\naccept: y\r\n\r\n',
    'two Content-Lengths': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx',
    'Transfer-Encoding': 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'Content-Length and Transfer-Encoding': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'a signed Content-Length': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n',
    'a Content-Length list': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n',
    'an empty Content-Length': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n',
    'a 16-digit Content-Length': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000000000000\r\n\r\n',
    'Expect': 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n',
    'Upgrade': 'POST / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    'Connection: upgrade alone': 'POST / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n\r\n',
    'no Host': 'POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n',
    'a head over the limit': `POST / HTTP/1.1\r\nHost: a\r\nX: ${'v'.repeat(LIMIT)}\r\n\r\n`,
    'an unfinished head over the limit': `POST / HTTP/1.1\r\nHost: a\r\nX: ${'v'.repeat(LIMIT)}`,
    'too many headers': `POST / HTTP/1.1\r\nHost: a\r\n${Array.from({ length: MAX_HEADERS }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`,
  };
  for (const [name, text] of Object.entries(cases)) t.equal(read(text), 'handover', name);
  t.type(read(`POST / HTTP/1.1\r\nHost: a\r\n${Array.from({ length: MAX_HEADERS - 1 }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`), 'object', 'the most headers taken');
});

/** What Node's HTTP server reads from `text`: its request, or the error it answers. */
async function nodeReads(text: string): Promise<{ method?: string; url?: string; headers?: Record<string, string | string[] | undefined>; bodyLength?: number; error?: string }> {
  const server = createServer();
  const seen = new Promise<{ req: IncomingMessage; bodyLength: number } | Error>((resolve) => {
    server.on('request', (req: IncomingMessage, res) => {
      let bodyLength = 0;
      req.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
      req.on('end', () => {
        resolve({ req, bodyLength });
        res.end();
      });
    });
    server.on('clientError', (err: Error, socket) => {
      resolve(err);
      socket.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => {});
  socket.end(Buffer.from(text, 'latin1'));
  const got = await seen;
  socket.destroy();
  server.close();
  if (got instanceof Error) return { error: (got as Error & { code?: string }).code ?? got.message };
  const { req, bodyLength } = got;
  return { method: req.method, url: req.url, headers: req.headers, bodyLength };
}

t.test('what this reader accepts, Node reads the same way', async (t) => {
  const body = '{"model":"m","stream":true}';
  const heads = [
    plain().replace('Content-Length: 12', `Content-Length: ${body.length}`),
    `POST /v1/messages HTTP/1.1\r\nhost: relay:8080\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    `POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nX-Tabs:\t\tv\t \r\nX-Empty:\r\nX-Odd: !#$%&'*+-.^_\`|~\r\n\r\n`,
    `POST /a%20b?q=%2F&r=[1] HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    `POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 00${body.length}\r\nUser-Agent: caf\u00e9/1.0\r\n\r\n`,
    `POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\nAuthorization: Bearer rk_x\r\n\r\n`,
  ];
  for (const head of heads) {
    const text = head + body;
    const ours = read(text);
    if (ours === 'handover' || ours === 'incomplete') {
      t.fail(`not accepted: ${JSON.stringify(head)}`);
      continue;
    }
    const node = await nodeReads(text);
    t.same(
      { method: 'POST', url: ours.url, headers: { ...ours.headers }, bodyLength: ours.bodyLength },
      { method: node.method, url: node.url, headers: node.headers, bodyLength: node.bodyLength },
      JSON.stringify(head),
    );
  }
});

t.test('random one-byte edits: accepted only where Node reads the same', async (t) => {
  const base = `${plain('X-Trace: abc-123\r\n')}{"model":"m"}`;
  // Bytes that matter to HTTP's grammar, and a few that do not.
  const bytes = [0x00, 0x09, 0x0a, 0x0d, 0x20, 0x22, 0x2c, 0x2f, 0x3a, 0x3b, 0x3f, 0x41, 0x7f, 0x80, 0xff];
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  let accepted = 0;
  for (let i = 0; i < 150; i++) {
    const at = random(base.length - 12);
    const text = base.slice(0, at) + String.fromCharCode(bytes[random(bytes.length)]!) + base.slice(at + 1);
    const ours = read(text);
    if (ours === 'handover' || ours === 'incomplete') continue;
    accepted++;
    const node = await nodeReads(text.slice(0, ours.headEnd + ours.bodyLength));
    t.same(
      { method: 'POST', url: ours.url, headers: { ...ours.headers }, bodyLength: ours.bodyLength },
      { method: node.method, url: node.url, headers: node.headers, bodyLength: node.bodyLength },
      JSON.stringify(text.slice(0, ours.headEnd)),
    );
  }
  t.ok(accepted > 20, `some edits are still plain heads (${accepted})`);
});
