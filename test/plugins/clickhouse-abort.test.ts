// log-clickhouse and payload-clickhouse honour the queue's abort over HTTP: an insert to a server
// that accepts it and never answers has its request destroyed at the write deadline (the socket
// closes), so the retry goes out on a fresh connection and is written once the server answers,
// without waiting for the client's own request_timeout; close() past its deadline does the same.
//
// No ClickHouse server runs here (the other ClickHouse tests use chdb in-process, which has no
// HTTP hop), so the server is a plain HTTP one that answers as ClickHouse answers a DDL or an
// insert (200, empty body) until told to hang; the engine's side of an insert is tested on chdb
// in log-clickhouse.test.ts and payload-clickhouse.test.ts.
//
// The client is each plugin's own (client.ts), logging to a pino logger: an abort Relay asked for
// writes nothing to the console (the client's default logger printed an ERROR with a stack each
// time) and is only a debug line; an error the server answers reaches pino, without the password.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClickHouseClient } from '@clickhouse/client';
import pino from 'pino';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import { clickHouseClient as logClickHouseClient } from '../../plugins/log-clickhouse/client.ts';
import { clickHouseClient as payloadClickHouseClient } from '../../plugins/payload-clickhouse/client.ts';
import { ClickHouseUsageBackend } from '../../plugins/log-clickhouse/clickhouse-usage-backend.ts';
import { ClickHousePayloadBackend } from '../../plugins/payload-clickhouse/clickhouse-payload-backend.ts';
import { capturedPayload, usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** A bound on a hang, not a speed figure (the plugins' client gives a request 30 s of its own). */
const BOUND_MS = 10_000;
/** The password the plugins' client sends (passwordEnv): it must appear in no log line. */
const PASSWORD_ENV = 'RELAY_TEST_CLICKHOUSE_ABORT_PASSWORD';
const PASSWORD = 'ch-pass-6f1d0c2a9b';
process.env[PASSWORD_ENV] = PASSWORD;
/** What ClickHouse answers a bad login (an HTTP 516 exception). */
const AUTH_FAILED = 'Code: 516. DB::Exception: relay: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)';

interface Received { query: string; body: string }
interface Line { level: number; msg: string; [key: string]: unknown }

/** pino's lines, at debug, as the plugin's logger would write them. */
function capturePino() {
  const lines: Line[] = [];
  const raw: string[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => { raw.push(line); lines.push(JSON.parse(line) as Line); } });
  return { log, lines, raw };
}

/** Everything written to the console and to stderr while the test runs (the client's default logger used console.*). */
function captureConsole(t: Test): string[] {
  const written: string[] = [];
  const methods = ['error', 'warn', 'info', 'debug', 'log', 'trace'] as const;
  const saved = methods.map((m) => [m, console[m]] as const);
  for (const m of methods) console[m] = (...args: unknown[]) => { written.push(`console.${m}: ${args.map(String).join(' ')}`); };
  const stderrWrite = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => { written.push(`stderr: ${String(chunk)}`); return true; }) as typeof process.stderr.write;
  t.teardown(() => {
    for (const [m, f] of saved) console[m] = f;
    process.stderr.write = stderrWrite;
  });
  return written;
}

type MakeClient = (url: string, log: pino.Logger) => ClickHouseClient;

/** An HTTP server that answers every request with 200 until hang() (then it reads requests and never answers them) or fail() (then it answers ClickHouse's bad-login error). */
async function startServer(t: Test, makeClient: MakeClient) {
  const answered: Received[] = [];
  const hung: Array<{ query: string; closed: boolean }> = [];
  let mode: 'answer' | 'hang' | 'fail' = 'answer';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
      if (mode === 'hang') {
        const entry = { query, closed: false };
        hung.push(entry);
        req.socket.on('close', () => { entry.closed = true; });
        return;
      }
      if (mode === 'fail') {
        res.writeHead(516, { 'content-type': 'text/plain', 'x-clickhouse-exception-code': '516' }).end(AUTH_FAILED);
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
  const pinoLines = capturePino();
  const client = makeClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, pinoLines.log);
  t.teardown(() => client.close());
  return {
    client, answered, hung, ...pinoLines,
    hang() { mode = 'hang'; },
    answer() { mode = 'answer'; },
    fail() { mode = 'fail'; },
  };
}

const connection = { database: 'default', username: 'relay', passwordEnv: PASSWORD_ENV };
const backends = [
  {
    name: 'log-clickhouse',
    client: ((url, log) => logClickHouseClient({ ...connection, url }, log)) as MakeClient,
    make: (client: ClickHouseClient) => new ClickHouseUsageBackend({ client, table: 'usage', ttlDays: 0, ownsClient: false }),
    item: () => { const e = usageEvent(); return { item: e, id: e.request_id }; },
  },
  {
    name: 'payload-clickhouse',
    client: ((url, log) => payloadClickHouseClient({ ...connection, url }, log)) as MakeClient,
    make: (client: ClickHouseClient) => new ClickHousePayloadBackend({ client, table: 'payloads', ttlDays: 0, ownsClient: false }),
    item: () => { const p = capturedPayload(`payload-${Math.random().toString(36).slice(2)}`); return { item: p, id: p.request_id }; },
  },
] as const;

/** pino's warn and error lines (level 40 and up). */
const warnings = (lines: Line[]) => lines.filter((l) => l.level >= 40);

for (const b of backends) {
  t.test(`${b.name}: an insert hung past the write deadline has its request destroyed, and the retry is written once the server answers`, async (t) => {
    const written = captureConsole(t);
    const server = await startServer(t, b.client);
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
    t.same(written, [], 'the client wrote nothing to the console or stderr at the abort');
    t.same(warnings(server.lines), [], 'nor a warning or an error to the log');
    t.match(server.lines.filter((l) => /abort/i.test(l.msg)), [{ level: 20, msg: /aborted by Relay/, clickhouse: { operation: 'Insert' } }], 'the abort is one debug line');
  });

  t.test(`${b.name}: an error the server answers reaches the plugin's logger, not the console, without the password`, async (t) => {
    const written = captureConsole(t);
    const server = await startServer(t, b.client);
    const backend = b.make(server.client) as { init(): Promise<void>; write(batch: unknown[], options?: { signal: AbortSignal }): Promise<void> };
    await backend.init();
    server.fail();
    await t.rejects(backend.write([b.item().item], { signal: new AbortController().signal }), { message: /Authentication failed/ });
    t.same(written, [], 'nothing on the console or stderr');
    t.match(warnings(server.lines), [{ level: 50, msg: 'Insert: HTTP request error.', err: { message: /Authentication failed/ }, clickhouse: { module: 'Connection', operation: 'Insert' } }], 'one error line: the client\'s message, the server\'s error');
    const all = server.raw.join('');
    t.notOk(all.includes(PASSWORD), 'no line holds the password');
    t.notOk(all.includes(Buffer.from(`relay:${PASSWORD}`).toString('base64')), 'nor the Authorization header');
  });
}

t.test('log-clickhouse: close() past its deadline destroys the insert still running', async (t) => {
  const written = captureConsole(t);
  const server = await startServer(t, backends[0].client);
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
  t.ok(server.hung[0]?.closed, 'and the insert\'s connection is closed, not left to the client\'s 30 s timeout');
  t.same(written, [], 'the client wrote nothing to the console or stderr');
  t.same(warnings(server.lines), [], 'nor a warning or an error to the log');
});
