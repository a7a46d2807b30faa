import t from 'tap';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3PayloadBackend } from '../../plugins/payload-s3/s3-payload-backend.ts';
import { resolveCredentials } from '../../plugins/payload-s3/credentials.ts';
import plugin from '../../plugins/payload-s3/index.ts';
import { payloadBackendSuite } from '../support/payload-backend-suite.ts';
import { capturedPayload } from '../support/observer-fixtures.ts';
import { startS3 } from '../support/s3.ts';

const s3 = await startS3();
t.teardown(() => s3.close());

t.test('conformance on s3rver', async (t) => {
  payloadBackendSuite(t, async () => {
    const client = s3.client();
    return { backend: new S3PayloadBackend({ client, bucket: s3.bucket, prefix: 'suite/', concurrency: 4 }), cleanup: async () => client.destroy() };
  });
});

t.test('bodies are content-addressed: one blob per distinct body', async (t) => {
  const client = s3.client();
  t.teardown(() => client.destroy());
  const backend = new S3PayloadBackend({ client, bucket: s3.bucket, prefix: 'dedupe/', concurrency: 4 });
  const body = JSON.stringify({ messages: [{ role: 'system', content: 'shared' }] });
  await backend.write(Array.from({ length: 5 }, (_, i) => capturedPayload(`r${i}`, { request_body: body, response_body: 'same answer' })));
  const list = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'dedupe/' }));
  const keys = (list.Contents ?? []).map((o) => o.Key!);
  t.equal(keys.filter((k) => k.includes('/blobs/sha256/')).length, 2, 'two distinct bodies, two blobs');
  t.equal(keys.filter((k) => k.includes('/requests/')).length, 5, 'one index object per request');
  t.ok(keys.some((k) => /blobs\/sha256\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(k)));
});

t.test('credentials: from named environment variables, or sealed; never plaintext', async (t) => {
  process.env.TEST_S3_KEY = s3.accessKeyId;
  process.env.TEST_S3_SECRET = s3.secretAccessKey;
  t.teardown(() => { delete process.env.TEST_S3_KEY; delete process.env.TEST_S3_SECRET; });
  t.same(resolveCredentials({ fromEnv: { accessKeyId: 'TEST_S3_KEY', secretAccessKey: 'TEST_S3_SECRET' } }, () => ''), { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
  t.throws(() => resolveCredentials({ fromEnv: { accessKeyId: 'NOPE_UNSET', secretAccessKey: 'TEST_S3_SECRET' } }, () => ''), /NOPE_UNSET/);
  t.same(resolveCredentials({ sealed: { accessKeyId: 'sealed:a', secretAccessKey: 'sealed:b' } }, (s) => s.replace('sealed:', 'open-')), { accessKeyId: 'open-a', secretAccessKey: 'open-b' });
  t.equal(resolveCredentials(undefined, () => ''), undefined, 'unset: the SDK default chain');

  // Through the plugin, with sealed values opened by relay.openSecret.
  const backends: S3PayloadBackend[] = [];
  const relay = {
    openSecret: (sealed: string) => Buffer.from(sealed, 'base64').toString(),
    hooks: { addPayloadBackend: (b: S3PayloadBackend) => backends.push(b) },
  };
  await plugin.register(relay as never, {
    bucket: s3.bucket, prefix: 'plugin/', region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, checksums: 'WHEN_REQUIRED', concurrency: 2, timeoutMs: 30_000,
    credentials: { sealed: { accessKeyId: Buffer.from('S3RVER').toString('base64'), secretAccessKey: Buffer.from('S3RVER').toString('base64') } },
  });
  const payload = capturedPayload('via-plugin');
  await backends[0].write([payload]);
  t.same(await backends[0].get('via-plugin'), payload);
  await backends[0].close();
});
