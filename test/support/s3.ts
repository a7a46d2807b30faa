// An S3-compatible server for tests: s3rver on a free loopback port, in a temporary directory.
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  client(): S3Client;
  close(): Promise<void>;
}

export async function startS3(bucket = 'relay-test'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'relay-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  // s3rver accepts the well-known test credentials S3RVER/S3RVER.
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = () => new S3Client({
    region: 'us-east-1', endpoint, forcePathStyle: true, credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const admin = client();
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.destroy();
  return {
    endpoint, bucket, ...credentials, client,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
