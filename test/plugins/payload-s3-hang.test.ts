// payload-s3 against an S3 store that accepts connections and never answers (a proxy in front of
// s3rver): a write fails past the plugin's timeoutMs (the SDK's own retries included) instead of
// waiting for good, so the payload queue, which keeps one call in flight, can retry it; once the
// store answers, the next write goes through.
import t from 'tap';
import plugin from '../../plugins/payload-s3/index.ts';
import type { S3PayloadBackend } from '../../plugins/payload-s3/s3-payload-backend.ts';
import { capturedPayload } from '../support/observer-fixtures.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { startS3 } from '../support/s3.ts';
import { settlesWithin } from '../support/settles-within.ts';

const BOUND_MS = 20_000;
const s3 = await startS3();
const proxy = await startHangingProxy(Number(new URL(s3.endpoint).port));
t.teardown(async () => {
  proxy.dropHeld();
  await proxy.close();
  await s3.close();
});

t.test('a store that never answers: the write fails, and the next one after it answers is stored', async (t) => {
  const backends: S3PayloadBackend[] = [];
  await plugin.register({ openSecret: (sealed: string) => sealed, hooks: { addPayloadBackend: (b: S3PayloadBackend) => backends.push(b) } } as never, {
    bucket: s3.bucket, prefix: 'hang/', region: 'us-east-1', endpoint: `http://127.0.0.1:${proxy.port}`, forcePathStyle: true,
    checksums: 'WHEN_REQUIRED', concurrency: 2, timeoutMs: 300,
    credentials: { sealed: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } },
  });
  const backend = backends[0]!;
  t.teardown(async () => { proxy.dropHeld(); await backend.close(); });
  await backend.write([capturedPayload('s3-before')]);

  proxy.hang();
  t.equal(await settlesWithin(backend.write([capturedPayload('s3-hung')]), BOUND_MS), 'rejected', 'the write fails instead of hanging');

  proxy.answer();
  const after = capturedPayload('s3-after');
  t.equal(await settlesWithin(backend.write([after]), BOUND_MS), 'resolved');
  t.same(await backend.get('s3-after'), after, 'stored once the store answers');
});
