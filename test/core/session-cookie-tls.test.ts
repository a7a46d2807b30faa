// The session cookie over a TLS socket (issue 38 #18): Secure without admin.secureCookies and
// without any proxy header, because the request itself came over TLS.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import t from 'tap';
import { sessionCookie } from '../../core/control/session-cookie.ts';

const tls = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/tls');
const cert = readFileSync(path.join(tls, 'localhost-cert.pem'));

async function setCookieOver(protocol: 'http' | 'https'): Promise<string> {
  // An https Fastify is typed apart from an http one; the routes and cookies are the same.
  const app = (protocol === 'https'
    ? Fastify({ https: { key: readFileSync(path.join(tls, 'localhost-key.pem')), cert } })
    : Fastify()) as unknown as FastifyInstance;
  await app.register(cookie);
  app.get('/login', async (request, reply) => {
    reply.header('set-cookie', sessionCookie(app, request, 'token-value', new Date(Date.now() + 60_000), false));
    return {};
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const port = (app.server.address() as { port: number }).port;
    if (protocol === 'http') return (await fetch(`http://127.0.0.1:${port}/login`)).headers.get('set-cookie') ?? '';
    return await new Promise<string>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port, path: '/login', ca: cert, servername: 'localhost' }, (res) => {
        res.resume();
        resolve(String(res.headers['set-cookie'] ?? ''));
      }).on('error', reject);
    });
  } finally {
    await app.close();
  }
}

t.test('a request over TLS gets a Secure cookie; plain http does not', async (t) => {
  t.match(await setCookieOver('https'), /; Secure/);
  t.notMatch(await setCookieOver('http'), /Secure/);
});
