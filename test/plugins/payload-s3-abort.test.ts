// payload-s3 honours the queue's abort: a write to a store that accepts connections and never
// answers (a proxy in front of s3rver) has its requests destroyed at the write deadline (the
// SDK's abortSignal), so the retry is stored once the store answers, without waiting for the
// plugin's own timeoutMs; close() past its deadline ends the write too.
import t, { type Test } from 'tap';
import { createBatchQueue } from '../../core/observer/batch-queue.ts';
import type { CapturedPayload } from '../../core/hooks.ts';
import plugin from '../../plugins/payload-s3/index.ts';
import type { S3PayloadBackend } from '../../plugins/payload-s3/s3-payload-backend.ts';
import { capturedPayload } from '../support/observer-fixtures.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { startS3 } from '../support/s3.ts';
import { settlesWithin } from '../support/settles-within.ts';

/** A bound on a hang, not a speed figure. */
const BOUND_MS = 10_000;

const s3 = await startS3();
const proxy = await startHangingProxy(Number(new URL(s3.endpoint).port));
t.teardown(async () => {
  proxy.dropHeld();
  await proxy.close();
  await s3.close();
});

async function s3Backend(t: Test): Promise<S3PayloadBackend> {
  proxy.answer();
  const backends: S3PayloadBackend[] = [];
  await plugin.register({ openSecret: (sealed: string) => sealed, hooks: { addPayloadBackend: (b: S3PayloadBackend) => backends.push(b) } } as never, {
    bucket: s3.bucket, prefix: 'abort/', region: 'us-east-1', endpoint: `http://127.0.0.1:${proxy.port}`, forcePathStyle: true,
    // The plugin's own deadline, far beyond the test: only the abort can end a request.
    checksums: 'WHEN_REQUIRED', concurrency: 2, timeoutMs: 600_000,
    credentials: { sealed: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } },
  });
  const backend = backends[0]!;
  t.teardown(async () => { proxy.dropHeld(); await backend.close(); });
  // A connection opened and kept alive, as in a running Relay.
  await backend.write([capturedPayload(`warm-${Math.random().toString(36).slice(2)}`)]);
  return backend;
}

t.test('a write hung past the write deadline has its requests destroyed, and the retry is stored once the store answers', async (t) => {
  const backend = await s3Backend(t);
  const retried: unknown[] = [];
  const queue = createBatchQueue<CapturedPayload>({
    name: 'payload:s3', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 500,
    retry: { initialBackoffMs: 50, maxBackoffMs: 50, maxRetryMs: 60_000 },
    write: (batch, options) => backend.write(batch, options),
    // The store answers again as soon as the first attempt failed: only the hung call stands in the way.
    onRetry: (_, err) => { retried.push(err); proxy.answer(); },
  });
  t.teardown(() => queue.close(100));

  proxy.hang();
  const payload = capturedPayload('s3-abort-retried');
  queue.push(payload);
  t.equal(await settlesWithin(queue.flush(), BOUND_MS), 'resolved', 'stored without waiting for the hung requests\' own timeout');
  t.match(retried, [{ name: 'WriteTimedOut' }], 'one attempt timed out, and the retry succeeded');
  t.match(proxy.held(), /PUT \/relay-test\/abort\//, 'the hung attempt had sent its requests to the silent store');
  t.same(await backend.get(payload.request_id), payload, 'the payload is stored');
  t.equal(queue.stats().written, 1);
});

t.test('close() past its deadline ends the write still running', async (t) => {
  const backend = await s3Backend(t);
  const calls: Array<Promise<unknown>> = [];
  const queue = createBatchQueue<CapturedPayload>({
    name: 'payload:s3', maxBatchSize: 1, maxDelayMs: 1, writeTimeoutMs: 600_000,
    write: (batch, options) => {
      const call = backend.write(batch, options);
      calls.push(call.then(() => 'stored', (err: unknown) => err));
      return call;
    },
  });
  proxy.hang();
  queue.push(capturedPayload('s3-abort-closed'));
  t.equal(await settlesWithin(queue.close(500), BOUND_MS), 'resolved', 'close() ends at its deadline');
  t.equal(calls.length, 1);
  t.equal(await settlesWithin(calls[0]!, BOUND_MS), 'resolved', 'the write call ended');
  t.match(await Promise.race([calls[0], new Promise((r) => setTimeout(r, 100, 'still running'))]), { name: 'WriteAbandoned' }, 'with the queue\'s reason');
});
