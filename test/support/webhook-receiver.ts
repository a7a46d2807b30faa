// A real HTTP webhook receiver for alert tests: records every POST (path, body) and answers each
// path with the status its handler says (200 unless told otherwise).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  path: string;
  body: any;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedHook[];
  /** What a path answers: a status, e.g. 500 for a failing receiver. */
  answer(path: string, status: number): void;
  on(path: string): ReceivedHook[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) => new Promise<string>((resolve, reject) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  req.on('error', reject);
});

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const statuses = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: unknown = text;
    try { body = JSON.parse(text); } catch { /* recorded as text */ }
    received.push({ path: req.url ?? '/', body, at: Date.now() });
    res.writeHead(statuses.get(req.url ?? '/') ?? 200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (path, status) => { statuses.set(path, status); },
    on: (path) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
