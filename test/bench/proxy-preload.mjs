// Loaded into Relay with --import by proxy-in-relay.ts: the bare proxy of node-proxy.ts, on its own
// port inside Relay's process (PROXY_PRELOAD_PORT), forwarding to PROXY_PRELOAD_UPSTREAM.
import http from 'node:http';
import { Pool } from 'undici';

const upstream = process.env.PROXY_PRELOAD_UPSTREAM;
const FORWARDED = ['content-type', 'authorization', 'x-api-key', 'anthropic-version'];

if (upstream) {
  const pool = new Pool(upstream, { connections: 256 });
  http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const headers = {};
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
        .catch((err) => {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(String(err));
        });
    });
  }).listen(Number(process.env.PROXY_PRELOAD_PORT), '127.0.0.1');
}
