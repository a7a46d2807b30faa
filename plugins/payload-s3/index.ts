// payload-s3: captured payloads in S3 (or an S3-compatible store), content-addressed.
import { S3Client } from '@aws-sdk/client-s3';
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { CredentialsOption, resolveCredentials } from './credentials.ts';
import { S3PayloadBackend } from './s3-payload-backend.ts';

/** Bound on opening a connection to the store. */
const CONNECT_TIMEOUT_MS = 5_000;

export const PayloadS3Options = Type.Object({
  bucket: Type.String({ minLength: 3 }),
  prefix: Type.String({ default: 'relay/', description: 'Key prefix of every object.' }),
  region: Type.String({ default: 'us-east-1' }),
  endpoint: Type.Optional(Type.String({ description: 'For S3-compatible stores (MinIO, R2, ...).' })),
  forcePathStyle: Type.Boolean({ default: false, description: 'Path-style URLs (most S3-compatible stores need it).' }),
  checksums: Type.Union([Type.Literal('WHEN_SUPPORTED'), Type.Literal('WHEN_REQUIRED')], {
    default: 'WHEN_SUPPORTED', description: 'Request checksums; WHEN_REQUIRED for stores that reject the SDK\'s default CRC headers.',
  }),
  concurrency: Type.Integer({ minimum: 1, maximum: 64, default: 8, description: 'Parallel uploads per batch.' }),
  timeoutMs: Type.Integer({
    minimum: 100, maximum: 600_000, default: 30_000,
    description: 'Most one request to the store may take (the SDK retries it up to twice); past it the write fails and the queue retries the batch.',
  }),
  credentials: Type.Optional(CredentialsOption),
}, { additionalProperties: false });

export default definePlugin({
  name: 'payload-s3',
  kind: 'payload',
  description: 'Captured payloads in S3: content-addressed body blobs plus an index object per request.',
  options: PayloadS3Options,
  backends: () => ({ payload: ['s3'] }),
  register(relay, options) {
    const client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: resolveCredentials(options.credentials, (sealed) => relay.openSecret(sealed)),
      requestChecksumCalculation: options.checksums,
      responseChecksumValidation: options.checksums,
      // The SDK waits for good by default (its requestTimeout only warns unless told to throw): a
      // store that never answers would hold the payload queue's one call in flight.
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: options.timeoutMs, throwOnRequestTimeout: true },
    });
    relay.hooks.addPayloadBackend(new S3PayloadBackend({ client, bucket: options.bucket, prefix: options.prefix, concurrency: options.concurrency }));
  },
});
