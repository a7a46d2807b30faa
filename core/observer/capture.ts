// Payload capture: bodies up to maxBytes with a truncation flag, and the CapturedPayload the
// observer hands to the payload backend. Created only for requests that pass the payload gate,
// so uncaptured requests pay nothing.
import { Transform, type TransformCallback } from 'node:stream';
import type { CapturedPayload } from '../hooks.ts';
import { redactHeaders } from '../http/headers.ts';

/** Accumulates the first `maxBytes` bytes of a body, as it arrives, and whether more came. */
export class BodyCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;

  constructor(readonly maxBytes: number) {}

  add(chunk: Buffer | Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.seen += bytes.length;
    const room = this.maxBytes - this.kept;
    if (room <= 0) return;
    // A partly kept chunk is copied so the rest of a large chunk is not held alive.
    const part = bytes.length <= room ? bytes : Buffer.from(bytes.subarray(0, room));
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** True when the body was longer than maxBytes. */
  get truncated(): boolean {
    return this.seen > this.maxBytes;
  }

  /** Bytes seen in total, kept or not. */
  get totalBytes(): number {
    return this.seen;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }

  /** The kept bytes as UTF-8; a character cut by the cap is left out rather than mangled. */
  text(): string {
    const bytes = this.bytes();
    return (this.truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes).toString('utf8');
  }

  /** A pass-through stream that captures what flows through it (e.g. a streamed response). */
  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) => {
        this.add(chunk);
        callback(null, chunk);
      },
    });
  }
}

/** Length of `bytes` without a trailing, incomplete UTF-8 sequence. */
export function completeUtf8Length(bytes: Buffer): number {
  let i = bytes.length - 1;
  // Walk back over at most 3 continuation bytes to the lead byte of the last sequence.
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (bytes[i] & 0xc0) === 0x80) {
    i -= 1;
    continuation += 1;
  }
  if (i < 0) return bytes.length;
  const lead = bytes[i];
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return continuation + 1 >= needed ? bytes.length : i;
}

export interface CaptureInput {
  requestId: string;
  request: BodyCapture;
  response: BodyCapture;
  requestHeaders: Record<string, string | string[] | undefined>;
  responseHeaders: Record<string, string | string[] | undefined>;
  capturedAt?: Date;
}

/** The record for the payload backend; header credentials are removed here. */
export function buildCapturedPayload(input: CaptureInput): CapturedPayload {
  return {
    request_id: input.requestId,
    request_body: input.request.text(),
    response_body: input.response.text(),
    request_truncated: input.request.truncated,
    response_truncated: input.response.truncated,
    request_headers: redactHeaders(input.requestHeaders),
    response_headers: redactHeaders(input.responseHeaders),
    captured_at: (input.capturedAt ?? new Date()).toISOString(),
  };
}
