// A host key's value goes to its host's base URL, which whoever edits the catalog chooses, so a
// host key may not read the variables Relay's plugins read their own secrets from: a variable a
// plugin option names (log-clickhouse's passwordEnv, as examples/config/scaled.yaml ships it;
// payload-s3's credentials.fromEnv) and the OpenTelemetry SDK's OTEL_* (OTEL_EXPORTER_OTLP_HEADERS
// carries a tracing backend's token), as it may not read RELAY_* or a substituted ${NAME}. Through
// the admin API of a Relay started with those plugins.
import t from 'tap';
import { startRelay } from '../../core/testing.ts';
import { startFakeUpstream, refusingUrl } from '../support/fake-upstream.ts';
import { startS3 } from '../support/s3.ts';

const up = await startFakeUpstream();
const s3 = await startS3('relay-host-key-env');
// The plugins read process.env themselves, as in production.
Object.assign(process.env, {
  HOSTKEY_TEST_CH_PASSWORD: 'clickhouse-secret', HOSTKEY_TEST_S3_ID: s3.accessKeyId, HOSTKEY_TEST_S3_SECRET: s3.secretAccessKey,
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer tracing-secret', VENDOR_TEST_KEY: 'sk-vendor',
});
const relay = await startRelay({
  plugins: [
    { use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'payload-file' },
    { use: 'log-clickhouse', options: { url: await refusingUrl(), passwordEnv: 'HOSTKEY_TEST_CH_PASSWORD' } },
    { use: 'payload-s3', options: { bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, credentials: { fromEnv: { accessKeyId: 'HOSTKEY_TEST_S3_ID', secretAccessKey: 'HOSTKEY_TEST_S3_SECRET' } } } },
  ],
});
t.teardown(async () => {
  await relay.close();
  await up.close();
  await s3.close();
});

t.test('a host key cannot read a variable a plugin option names, nor OTEL_*', async (t) => {
  const provider = await relay.api<{ metadata: { id: string } }>('POST', '/api/providers', { metadata: { displayName: 'p' }, spec: { adapter: 'openai' } });
  const host = await relay.api<{ metadata: { id: string } }>('POST', '/api/hosts', { metadata: { displayName: 'h' }, spec: { providerId: provider.body.metadata.id, baseUrl: `${up.url}/v1` } });
  const hostKey = (env: string) => relay.api<{ error?: { message: string; field?: string } }>('POST', '/api/host-keys', {
    metadata: { displayName: `k-${env.toLowerCase().replace(/_/g, '-')}` }, spec: { hostId: host.body.metadata.id, valueFrom: { kind: 'env', env } },
  });
  t.equal((await hostKey('VENDOR_TEST_KEY')).status, 201, 'a vendor variable is read');
  for (const env of ['HOSTKEY_TEST_CH_PASSWORD', 'hostkey_test_ch_password', 'HOSTKEY_TEST_S3_ID', 'HOSTKEY_TEST_S3_SECRET', 'OTEL_EXPORTER_OTLP_HEADERS']) {
    const res = await hostKey(env);
    t.equal(res.status, 400, `${env}: refused`);
    t.equal(res.body.error?.field, '/spec/valueFrom/env', `${env}: names the field`);
    t.notMatch(JSON.stringify(res.body), /secret/, `${env}: without the value`);
  }
});
