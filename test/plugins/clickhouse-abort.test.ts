// log-clickhouse and payload-clickhouse honour the queue's abort over HTTP: an insert to a server
// that accepts it and never answers has its request destroyed at the write deadline (the socket
// closes), so the retry goes out on a fresh connection and is written once the server answers,
// without waiting for the client's own request_timeout; close() past its deadline does the same.
//
// No ClickHouse server runs here (the other ClickHouse tests use chdb in-process, which has no
// HTTP hop), so the server is a plain HTTP one that answers as ClickHouse answers a DDL or an
// insert (200, empty body) until told to hang; the engine's side of an insert is tested on chdb
// in log-clickhouse.test.ts and payload-clickhouse.test.ts.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import { ClickHouseUsageBackend } from '../../plugins/log-clickhouse/clickhouse-usage-backend.ts';
import { ClickHousePayloadBackend } from '../../plugins/payload-clickhouse/clickhouse-payload-backend.ts';
import { capturedPayload, usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** The client's own deadline: far beyond the test, so only the abort can end a request. */
const REQUEST_TIMEOUT_MS = 600_000;
/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;

interface Received { query: string; body: string }

/** An HTTP server that answers every request with 200 until hang(); then it reads requests and never answers them. */
async function startServer(t: Test) {
  const answered: Received[] = [];
  const hung: Array<{ query: string; closed: boolean }> = [];
  let hanging = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
      if (hanging) {
        const entry = { query, closed: false };
        hung.push(entry);
        req.socket.on('close', () => { entry.closed = true; });
        return;
      }
      answered.push({ query, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain', 'x-clickhouse-summary': '{"written_rows":"0"}' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const client = createClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, request_timeout: REQUEST_TIMEOUT_MS, log: { level: ClickHouseLogLevel.OFF } });
  t.teardown(() => client.close());
  return {
    client, answered, hung,
    hang() { hanging = true; },
    answer() { hanging = false; },
  };
}

const backends = [
  {
    name: 'log-clickhouse',
    make: (client: ReturnType<typeof createClient>) => new ClickHouseUsageBackend({ client, table: 'usage', ttlDays: 0, ownsClient: false }),
    item: () => { const e = usageEvent(); return { item: e, id: e.request_id }; },
  },
  {
    name: 'payload-clickhouse',
    make: (client: ReturnType<typeof createClient>) => new ClickHousePayloadBackend({ client, table: 'payloads', ttlDays: 0, ownsClient: false }),
    item: () => { const p = capturedPayload(`payload-${Math.random().toString(36).slice(2)}`); return { item: p, id: p.request_id }; },
  },
] as const;

for (const b of backends) {
  t.test(`${b.name}: an insert hung past the write deadline has its request destroyed, and the retry is written once the server answers`, async (t) => {
    const server = await startServer(t);
    const backend = b.make(server.client) as { init(): Promise<void>; write(batch: unknown[], options?: { signal: AbortSignal }): Promise<void> };
    await backend.init();
    const retried: unknown[] = [];
    const queue = createBatchQueue<unknown>({
      name: b.name, maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 500,
      retry: { initialBackoffMs: 50, maxBackoffMs: 50, maxRetryMs: 60_000 },
      write: (batch, options) => backend.write(batch, options),
      // The server answers again as soon as the first attempt failed: only the hung call stands in the way.
      onRetry: (_, err) => { retried.push(err); server.answer(); },
    });
    t.teardown(() => queue.close(100));

    server.hang();
    const { item, id } = b.item();
    queue.push(item);
    t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved', 'written without waiting for the hung request\'s own timeout');
    t.match(retried, [{ name: 'WriteTimedOut' }], 'one attempt timed out, and the retry succeeded');
    t.equal(server.hung.length, 1, 'the server held one insert');
    t.match(server.hung[0]?.query, /^INSERT INTO/);
    t.ok(server.hung[0]?.closed, 'whose connection the client closed at the abort');
    const inserts = server.answered.filter((r) => r.query.startsWith('INSERT INTO'));
    t.equal(inserts.length, 1, 'the retry\'s insert was answered');
    t.match(inserts[0]?.body, id, 'carrying the batch');
    t.equal(queue.stats().written, 1);
  });
}

t.test('log-clickhouse: close() past its deadline destroys the insert still running', async (t) => {
  const server = await startServer(t);
  const backend = new ClickHouseUsageBackend({ client: server.client, table: 'usage', ttlDays: 0, ownsClient: false });
  await backend.init();
  const queue = createBatchQueue<ReturnType<typeof usageEvent>>({
    name: 'usage:clickhouse', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 600_000,
    write: (batch, options) => backend.write(batch, options),
  });
  server.hang();
  queue.push(usageEvent());
  for (let i = 0; i < BOUND_MS / 10 && server.hung.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.equal(server.hung.length, 1, 'the insert reached the server');
  t.equal(await settlesWithin(queue.close(500), BOUND_MS), 'resolved', 'close() ends at its deadline');
  for (let i = 0; i < BOUND_MS / 10 && !server.hung[0]?.closed; i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(server.hung[0]?.closed, 'and the insert\'s connection is closed, not left to the client\'s 600 s timeout');
});
