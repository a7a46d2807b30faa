// Bedrock's streamed answers arrive in AWS's binary event-stream framing
// (application/vnd.amazon.eventstream), decoded here with AWS's own codec
// (@smithy/eventstream-codec, CRCs checked) and re-emitted as SSE frames, the framing the
// pipeline reads: ConverseStream events keep their names; InvokeModelWithResponseStream
// `chunk`s carry Anthropic's own SSE events as base64 JSON and become those events.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { Message } from '@smithy/types';
import { RelayError, sseFrame, type UpstreamBody } from '../../core/plugin-api.ts';
import { anthropicErrorType } from './anthropic-errors.ts';

/** One decoded event-stream message -> SSE text (zero or more frames). */
export type MessageToSse = (message: Message) => string;

function header(message: Message, name: string): string | undefined {
  const h = message.headers[name];
  return h && h.type === 'string' ? h.value : undefined;
}

/** JSON text safe on one SSE data line: Bedrock's payloads are compact, but a newline would split the frame. */
function oneLine(text: string): string {
  return /[\r\n]/.test(text) ? JSON.stringify(JSON.parse(text)) : text;
}

/** The exception (`:message-type` exception or error) a message carries, if it is one. */
function exceptionOf(message: Message): { name: string; message: string } | null {
  const type = header(message, ':message-type');
  if (type === 'exception') {
    let text = '';
    try {
      const body = JSON.parse(toUtf8(message.body)) as { message?: unknown; Message?: unknown };
      text = String(body.message ?? body.Message ?? '');
    } catch {
      text = toUtf8(message.body);
    }
    return { name: header(message, ':exception-type') ?? 'exception', message: text };
  }
  if (type === 'error') return { name: header(message, ':error-code') ?? 'error', message: header(message, ':error-message') ?? '' };
  return null;
}

/** ConverseStream: `event: <eventType>` with its payload; exceptions as `event: exception`. */
export const converseToSse: MessageToSse = (message) => {
  const exception = exceptionOf(message);
  if (exception) return sseFrame('exception', JSON.stringify({ exception: exception.name, message: exception.message }));
  const event = header(message, ':event-type');
  if (!event) return '';
  return sseFrame(event, oneLine(toUtf8(message.body)));
};

/** InvokeModelWithResponseStream: each chunk's Anthropic event as Anthropic's SSE; exceptions as its `error` event. */
export const invokeToSse: MessageToSse = (message) => {
  const exception = exceptionOf(message);
  if (exception) {
    return sseFrame('error', JSON.stringify({ type: 'error', error: { type: anthropicErrorType(exception.name), message: exception.message } }));
  }
  if (header(message, ':event-type') !== 'chunk') return '';
  const { bytes } = JSON.parse(toUtf8(message.body)) as { bytes?: unknown };
  if (typeof bytes !== 'string') return '';
  const json = oneLine(Buffer.from(bytes, 'base64').toString('utf8'));
  const type = (JSON.parse(json) as { type?: unknown }).type;
  return sseFrame(typeof type === 'string' ? type : undefined, json);
};

/** Bound on one event-stream message (AWS caps them at 16 MiB); a larger prelude is a broken stream. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Total length (4) + headers length (4) + prelude CRC (4) + message CRC (4). */
const MIN_MESSAGE_BYTES = 16;

/**
 * Event-stream bytes in, SSE text out, chunk by chunk. Messages are cut at the length their
 * prelude states (as the AWS SDK's chunker does) and each is decoded, CRCs checked, by the codec.
 * A message's chunks are joined once it is whole: joining on every chunk would copy a 16 MiB
 * message arriving in small reads gigabytes of times over.
 */
export class EventStreamToSse {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private pending: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly toSse: MessageToSse) {}

  /** The SSE text of the messages this chunk completed. Throws on a corrupt message (a CRC mismatch). */
  push(chunk: Uint8Array): string {
    if (chunk.length === 0) return '';
    this.pending.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.bytes += chunk.length;
    let out = '';
    while (this.bytes >= 4) {
      const length = this.statedLength();
      if (length < MIN_MESSAGE_BYTES || length > MAX_MESSAGE_BYTES) throw new Error(`an event-stream message states ${length} bytes`);
      if (this.bytes < length) break;
      const joined = this.joined();
      const message = this.codec.decode(joined.subarray(0, length));
      this.keep(joined.subarray(length));
      out += this.toSse(message);
    }
    return out;
  }

  /** Throws when the bytes ended inside a message. */
  end(): string {
    if (this.bytes > 0) throw new Error('the event stream ended inside a message');
    return '';
  }

  /** The total length the next message's prelude states (its first four bytes, which may span chunks). */
  private statedLength(): number {
    const first = this.pending[0]!;
    return (first.length >= 4 ? first : this.joined()).readUInt32BE(0);
  }

  private joined(): Buffer {
    if (this.pending.length > 1) this.keep(Buffer.concat(this.pending, this.bytes));
    return this.pending[0]!;
  }

  private keep(rest: Buffer): void {
    this.pending = rest.length > 0 ? [rest] : [];
    this.bytes = rest.length;
  }
}

/** Bytes that are not an event stream (a CRC mismatch, a JSON body) are a bad answer, not an unreachable upstream. */
function unreadableAsBadResponse(read: () => string): string {
  try {
    return read();
  } catch (err) {
    throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', `the upstream's event stream could not be read: ${(err as Error).message}`);
  }
}

/** An upstream body of event-stream bytes, read as the SSE text `toSse` makes of its messages. */
export function eventStreamAsSse(body: UpstreamBody, toSse: MessageToSse): UpstreamBody {
  async function* frames(): AsyncGenerator<Buffer> {
    const converter = new EventStreamToSse(toSse);
    for await (const chunk of body) {
      const out = unreadableAsBadResponse(() => converter.push(chunk));
      if (out !== '') yield Buffer.from(out);
    }
    const out = unreadableAsBadResponse(() => converter.end());
    if (out !== '') yield Buffer.from(out);
  }
  const iterator = frames();
  return {
    [Symbol.asyncIterator]: () => iterator,
    resume: () => body.resume(),
    destroy: (err?: Error) => body.destroy(err),
  };
}
