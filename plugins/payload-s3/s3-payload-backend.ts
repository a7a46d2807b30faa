// Captured payloads in S3: bodies as content-addressed blobs (key = sha256 of the bytes, so a
// system prompt sent a thousand times is stored once), plus a small index object per request id.
import { createHash } from 'node:crypto';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { CapturedPayload, PayloadBackend } from '../../core/plugin-api.ts';
import type { BatchWriteOptions } from '../../core/plugin-api/log-backends.ts';

export interface S3PayloadBackendOptions {
  client: S3Client;
  bucket: string;
  /** Key prefix, e.g. `relay/`. */
  prefix: string;
  /** Parallel uploads per batch. */
  concurrency: number;
}

/** What the index object of a request holds. */
interface PayloadIndex {
  request_id: string;
  captured_at: string;
  request: { sha256: string; bytes: number };
  response: { sha256: string; bytes: number };
  request_truncated: boolean;
  response_truncated: boolean;
  request_headers: Record<string, string>;
  response_headers: Record<string, string>;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const RECENT_BLOBS = 10_000;

export class S3PayloadBackend implements PayloadBackend {
  readonly id = 's3';
  /** Blobs this process uploaded lately: skipped without a request. */
  private readonly recentBlobs = new Set<string>();

  constructor(private readonly options: S3PayloadBackendOptions) {}

  blobKey(hash: string): string {
    return `${this.options.prefix}blobs/sha256/${hash.slice(0, 2)}/${hash}`;
  }

  indexKey(requestId: string): string {
    return `${this.options.prefix}requests/${encodeURIComponent(requestId)}.json`;
  }

  private async putBlob(body: string, signal: AbortSignal | undefined): Promise<{ sha256: string; bytes: number }> {
    const bytes = Buffer.from(body, 'utf8');
    const hash = sha256(bytes);
    if (!this.recentBlobs.has(hash)) {
      await this.options.client.send(new PutObjectCommand({
        Bucket: this.options.bucket, Key: this.blobKey(hash), Body: bytes, ContentType: 'application/octet-stream',
      }), { abortSignal: signal });
      if (this.recentBlobs.size >= RECENT_BLOBS) this.recentBlobs.clear();
      this.recentBlobs.add(hash);
    }
    return { sha256: hash, bytes: bytes.length };
  }

  private async writeOne(payload: CapturedPayload, signal: AbortSignal | undefined): Promise<void> {
    const [request, response] = await Promise.all([this.putBlob(payload.request_body, signal), this.putBlob(payload.response_body, signal)]);
    const index: PayloadIndex = {
      request_id: payload.request_id,
      captured_at: payload.captured_at,
      request,
      response,
      request_truncated: payload.request_truncated,
      response_truncated: payload.response_truncated,
      request_headers: payload.request_headers,
      response_headers: payload.response_headers,
    };
    // The index goes last: a reader that finds it finds its blobs.
    await this.options.client.send(new PutObjectCommand({
      Bucket: this.options.bucket, Key: this.indexKey(payload.request_id), Body: JSON.stringify(index), ContentType: 'application/json',
    }), { abortSignal: signal });
  }

  /** An abort of `signal` destroys the requests in flight (the SDK's abortSignal) and starts no more, so the call ends at once. */
  async write(payloads: CapturedPayload[], options?: BatchWriteOptions): Promise<void> {
    const signal = options?.signal;
    let next = 0;
    const worker = async () => {
      while (next < payloads.length) {
        signal?.throwIfAborted();
        await this.writeOne(payloads[next++], signal);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency, payloads.length) }, worker));
    } catch (err) {
      throw signal?.aborted ? signal.reason : err;
    }
  }

  private async getText(key: string): Promise<string | null> {
    try {
      const out = await this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return (await out.Body?.transformToString('utf8')) ?? '';
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
      throw err;
    }
  }

  async get(requestId: string): Promise<CapturedPayload | null> {
    const text = await this.getText(this.indexKey(requestId));
    if (text === null) return null;
    const index = JSON.parse(text) as PayloadIndex;
    const [requestBody, responseBody] = await Promise.all([this.getText(this.blobKey(index.request.sha256)), this.getText(this.blobKey(index.response.sha256))]);
    return {
      request_id: index.request_id,
      request_body: requestBody ?? '',
      response_body: responseBody ?? '',
      request_truncated: index.request_truncated,
      response_truncated: index.response_truncated,
      request_headers: index.request_headers,
      response_headers: index.response_headers,
      captured_at: index.captured_at,
    };
  }

  async close(): Promise<void> {
    this.options.client.destroy();
  }
}
