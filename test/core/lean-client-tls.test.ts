// The lean upstream client over TLS (vendors are HTTPS): certificates are verified, so an
// untrusted one is refused by both clients; with the test certificate trusted (NODE_EXTRA_CA_CERTS,
// which Node reads only at start, hence a child process) bodies, chunked streams and keep-alive
// work as over TCP, SNI carries the host name, and an IP address is checked against the
// certificate's IP entry.
import t from 'tap';
import https from 'node:https';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { closeUpstreamPools, sendUpstream, useLeanUpstreamClient } from '../../core/http/upstream.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');
const CERT = path.join(FIXTURES, 'tls/localhost-cert.pem');

const tlsConnections: Array<string | false> = [];
const server = https.createServer({ key: readFileSync(path.join(FIXTURES, 'tls/localhost-key.pem')), cert: readFileSync(CERT) }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 3; i++) res.write(`data: ${i}\n\n`);
      return res.end('data: [DONE]\n\n');
    }
    const servername = (req.socket as TLSSocket).servername;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ got: Buffer.concat(chunks).toString(), servername }));
  });
});
server.on('secureConnection', (socket: TLSSocket) => tlsConnections.push(socket.servername ?? false));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `https://localhost:${(server.address() as AddressInfo).port}`;
t.teardown(async () => {
  await closeUpstreamPools();
  server.closeAllConnections();
  server.close();
});

for (const [name, lean] of [['lean', true], ['undici', false]] as const) {
  t.test(`${name}: a certificate this process does not trust is refused`, async (t) => {
    useLeanUpstreamClient(lean);
    const sent = sendUpstream(`${base}/json`, { method: 'POST', headers: {}, body: '{}', timeoutMs: 5_000 });
    useLeanUpstreamClient(true);
    const err = await sent.then(() => null, (e: NodeJS.ErrnoException) => e);
    t.ok(err, 'the request is refused');
    t.match(err?.code, /SELF_SIGNED|UNABLE_TO_VERIFY/, `a certificate error (${err?.code})`);
  });
}

t.test('lean: with the certificate trusted, bodies, streams and keep-alive over TLS', async (t) => {
  const before = tlsConnections.length;
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(FIXTURES, 'lean-client-tls-child.ts'), base], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT },
      timeout: 30_000,
    }, (err, out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out)));
  });
  const answers = JSON.parse(stdout) as Record<string, { status: number; body: string }>;
  t.same(answers.first, { status: 200, body: JSON.stringify({ got: '{"n":1}', servername: 'localhost' }) }, 'the body arrives; SNI names the host');
  t.same(answers.second, { status: 200, body: JSON.stringify({ got: '{"n":2,"text":"é"}', servername: 'localhost' }) }, 'a UTF-8 body arrives whole');
  t.same(answers.stream, { status: 200, body: 'data: 0\n\ndata: 1\n\ndata: 2\n\ndata: [DONE]\n\n' }, 'a chunked stream is read to its end');
  t.same(answers.byIp, { status: 200, body: JSON.stringify({ got: '{"n":3}', servername: false }) }, 'by IP: checked against the IP entry, no SNI');
  t.same(tlsConnections.slice(before), ['localhost', false], 'one TLS connection carried the three requests to localhost; one more for the IP origin');
});
