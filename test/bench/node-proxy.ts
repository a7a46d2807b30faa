// The floor of any gateway written for Node: a bare proxy, node:http in and an undici Pool out,
// that forwards the body and the vendor's auth headers as received and streams the answer back
// chunk by chunk. No authentication, routing, usage record or translation. The bench runs it as the
// target `node-proxy`, pinned like the gateways, to show what part of Relay's overhead is Node's.
//   node --import tsx test/bench/node-proxy.ts --upstream URL  -> prints `READY <url>`
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';

const FORWARDED = ['content-type', 'authorization', 'x-api-key', 'anthropic-version'];

/** The proxy's server (not yet listening) and its pool, forwarding to `upstream`. */
export function bareProxy(upstream: string): { server: http.Server; pool: Pool } {
  const pool = new Pool(upstream, { connections: 256 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of FORWARDED) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      pool.request({ path: req.url ?? '/', method: 'POST', headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) })
        .then(async (answer) => {
          const type = answer.headers['content-type'];
          res.writeHead(answer.statusCode, typeof type === 'string' ? { 'content-type': type } : {});
          for await (const chunk of answer.body) {
            if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
          }
          res.end();
        })
        .catch((err: Error) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(String(err));
        });
    });
  });
  return { server, pool };
}

// Run as a script (the bench's `node-proxy` target); proxy-preload.mjs imports bareProxy instead.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--upstream');
  const upstream = process.argv[at + 1];
  if (at < 0 || !upstream) throw new Error('usage: node-proxy.ts --upstream URL');
  const { server, pool } = bareProxy(upstream);
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  const stop = () => server.close(() => void pool.close().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
