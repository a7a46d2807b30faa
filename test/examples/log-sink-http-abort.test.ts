// examples/log-sink-http hands the queue's signal to fetch: a post to an endpoint that accepts it
// and never answers ends at the queue's write deadline (the connection closes), so the retry is
// received once the endpoint answers, without waiting for the sink's own timeoutMs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import plugin from '../../examples/log-sink-http/index.ts';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import type { UsageBackend, UsageEvent } from '../../core/plugin-api.ts';
import { usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;

const received: UsageEvent[] = [];
const hung: Array<{ closed: boolean }> = [];
let hanging = true;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (hanging) {
      const entry = { closed: false };
      hung.push(entry);
      req.socket.on('close', () => { entry.closed = true; });
      return;
    }
    received.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: UsageEvent[] }).events);
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

t.test('a post the endpoint never answers ends at the queue\'s abort, and the retry is received once it answers', async (t) => {
  const backends: UsageBackend[] = [];
  await plugin.register({ hooks: { addUsageBackend: (b: UsageBackend) => backends.push(b) }, log: { info() {} } } as never, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/usage`, id: 'http', headers: {},
    // The sink's own deadline, far beyond the test: only the abort can end a post.
    timeoutMs: 600_000,
  });
  const backend = backends[0]!;
  const retried: unknown[] = [];
  const queue = createBatchQueue<UsageEvent>({
    name: 'usage:http', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 500,
    retry: { initialBackoffMs: 50, maxBackoffMs: 50, maxRetryMs: 60_000 },
    write: (batch, options) => backend.write(batch, options),
    // The endpoint answers again as soon as the first attempt failed: only the hung post stands in the way.
    onRetry: (_, err) => { retried.push(err); hanging = false; },
  });
  t.teardown(() => queue.close(100));
  const event = usageEvent();
  queue.push(event);
  t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved', 'received without waiting for the sink\'s own timeout');
  t.match(retried, [{ name: 'WriteTimedOut' }], 'one attempt timed out, and the retry succeeded');
  t.equal(hung.length, 1, 'the endpoint held one post');
  t.ok(hung[0]?.closed, 'whose connection the sink closed at the abort');
  t.same(received.map((e) => e.request_id), [event.request_id], 'the retry was received');
});
