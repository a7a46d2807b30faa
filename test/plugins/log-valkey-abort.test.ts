// log-valkey honours the queue's abort: a write to a Valkey gone silent mid-conversation (a proxy
// in front of the real server stops forwarding) ends at the write deadline and its connection is
// opened again, so the retry is stored once the server answers, without waiting for the
// connection's own command timeout; close() past its deadline ends the write too.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import type { UsageEvent } from '../../core/hooks.ts';
import { valkeyClientOptions } from '../../core/plugin-api/log-backends.ts';
import { waitForValkey } from '../../core/server/valkey-options.ts';
import { ValkeyUsageBackend } from '../../plugins/log-valkey/valkey-usage-backend.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { usageEvent } from '../support/observer-fixtures.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;
/**
 * The connection's own command deadline: beyond the test's bounds, so only the abort can end a call.
 * The aborted call's commands are not sent again on the new connection (valkey-options.ts): they
 * settle only at this deadline, and keep the process alive until then.
 */
const CONNECTION_TIMEOUT_MS = 2 * BOUND_MS;

const proxy = await startHangingProxy(6379);
const direct = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
t.teardown(async () => {
  proxy.dropHeld();
  await proxy.close();
  direct.disconnect();
});

async function valkeyBackend(t: Test): Promise<{ backend: ValkeyUsageBackend; keyPrefix: string }> {
  proxy.answer();
  // As log-valkey opens its own connection (valkeyClientOptions), through the proxy, without the
  // socket timeout: it would end a silent connection by itself, and ioredis never clears its timer
  // once that connection closed (it would keep this process alive).
  // Its commands left unanswered are dropped when the connection closes, not resent: only their 600 s timers would end them
  // (keeping this process alive), so this test's client resends them, to settle them once the server answers again.
  const redis = new Redis(`redis://127.0.0.1:${proxy.port}`, { ...valkeyClientOptions(CONNECTION_TIMEOUT_MS), socketTimeout: undefined });
  redis.on('error', () => {});
  const keyPrefix = `relay-test:abort:${randomBytes(4).toString('hex')}:`;
  const backend = new ValkeyUsageBackend({ redis, keyPrefix, maxEvents: 1000, ttlSeconds: 3600 });
  t.teardown(async () => {
    proxy.answer();
    proxy.dropHeld();
    await settlesWithin(redis.quit(), BOUND_MS);
    redis.disconnect();
    const keys = await direct.keys(`${keyPrefix}*`);
    if (keys.length > 0) await direct.del(...keys);
  });
  await waitForValkey(redis, BOUND_MS);
  await backend.write([usageEvent()]);
  return { backend, keyPrefix };
}

t.test('a write hung past the write deadline ends at the abort, and the retry is stored once the server answers', async (t) => {
  const { backend, keyPrefix } = await valkeyBackend(t);
  const retried: unknown[] = [];
  const queue = createBatchQueue<UsageEvent>({
    name: 'usage:valkey', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 500,
    retry: { initialBackoffMs: 50, maxBackoffMs: 50, maxRetryMs: 60_000 },
    write: (batch, options) => backend.write(batch, options),
    // The server answers again as soon as the first attempt failed: only the hung call stands in the way.
    onRetry: (_, err) => { retried.push(err); proxy.answer(); },
  });
  t.teardown(() => queue.close(100));

  // The connection goes silent: the next write's commands are sent on it and never answered.
  proxy.stall();
  const event = usageEvent();
  queue.push(event);
  t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved', 'stored without waiting for the connection\'s own command timeout');
  t.match(retried, [{ name: 'WriteTimedOut' }], 'one attempt timed out, and the retry succeeded');
  t.match(proxy.held(), /multi/i, 'the hung attempt had sent its transaction to the silent server');
  t.same(JSON.parse((await direct.get(`${keyPrefix}event:${event.request_id}`))!), event, 'the event is stored');
  t.not(await direct.zscore(`${keyPrefix}index`, event.request_id), null, 'and indexed');
  t.equal(queue.stats().written, 1);
});

t.test('close() past its deadline ends the write still running', async (t) => {
  const { backend } = await valkeyBackend(t);
  const calls: Array<Promise<unknown>> = [];
  const queue = createBatchQueue<UsageEvent>({
    name: 'usage:valkey', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 600_000,
    write: (batch, options) => {
      const call = backend.write(batch, options);
      calls.push(call.then(() => 'stored', (err: unknown) => err));
      return call;
    },
  });
  proxy.stall();
  queue.push(usageEvent());
  t.equal(await settlesWithin(queue.close(500), BOUND_MS), 'resolved', 'close() ends at its deadline');
  t.equal(calls.length, 1);
  t.equal(await settlesWithin(calls[0]!, BOUND_MS), 'resolved', 'the write call ended');
  t.match(await Promise.race([calls[0], new Promise((r) => setTimeout(r, 100, 'still running'))]), { name: 'WriteAbandoned' }, 'with the queue\'s reason');
});
