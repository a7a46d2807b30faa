// Reads an inference request's body under its bounds (the inference listener's content-type
// parser): the size limit, a deadline for the whole body and for the gap between two reads, and a
// process-wide bound on the bytes that bodies in flight hold. Without the last three, keyless
// clients that send all but the last byte of large bodies could hold the process's memory for as
// long as they like. Reading the socket's chunks here, rather than through a stream wrapped around
// them, keeps one reader per body on the hot path. A compressed body is decoded here too, its
// decoded size held to the same limits.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RelayError } from '../errors.ts';
import { contentCoding, decodeBody, unsupportedCoding } from './content-encoding.ts';

export interface BodyGuardOptions {
  totalTimeoutMs: number;
  idleTimeoutMs: number;
  memoryLimitBytes: number;
}

export type BodyDone = (err: Error | null, body?: Buffer) => void;

const CLOSE = { connection: 'close' };
/** The bytes one request's body holds, kept on its IncomingMessage from track() to its answer's end. */
const HELD = Symbol('relay.heldBodyBytes');
type Tracked = IncomingMessage & { [HELD]?: { bytes: number } };

export class BodyGuard {
  /** Bytes of request bodies read and not yet answered, across every request. */
  heldBytes = 0;

  constructor(private readonly options: BodyGuardOptions) {}

  /** Counts `req`'s body against the process-wide bound until `res` closes (the request is answered). */
  track(req: IncomingMessage, res: ServerResponse): void {
    const held = { bytes: 0 };
    (req as Tracked)[HELD] = held;
    res.once('close', () => {
      this.heldBytes -= held.bytes;
      held.bytes = 0;
    });
  }

  /** Reads `payload` (a tracked request) whole and hands its bytes to `done`, or an error naming the bound it broke. */
  read(payload: IncomingMessage, limitBytes: number, done: BodyDone): void {
    const options = this.options;
    const tracked = (payload as Tracked)[HELD];
    const held = tracked ?? { bytes: 0 };
    const declared = Number(payload.headers['content-length']);
    if (declared > limitBytes) {
      done(tooLarge(limitBytes));
      return;
    }
    const coding = contentCoding(payload.headers['content-encoding']);
    const refused = coding === null ? null : unsupportedCoding(coding);
    if (refused) {
      payload.resume();
      done(refused);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let finished = false;
    const release = () => {
      this.heldBytes -= held.bytes;
      held.bytes = 0;
    };
    const finish = (err: Error | null, body?: Buffer) => {
      if (finished) return;
      finished = true;
      clearTimeout(total);
      clearTimeout(idle);
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onError);
      if (err || !tracked) release();
      // Whatever else arrives is read and dropped while the error goes out.
      if (err) payload.resume();
      done(err, body);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      held.bytes += chunk.length;
      this.heldBytes += chunk.length;
      if (received > limitBytes) return finish(tooLarge(limitBytes));
      if (this.heldBytes > options.memoryLimitBytes) return finish(overloaded());
      chunks.push(chunk);
      idle.refresh();
    };
    const onEnd = () => {
      if (!Number.isNaN(declared) && received !== declared) {
        finish(new RelayError('RELAY_ERR_BAD_REQUEST', 'the request body is not as long as its content-length says'));
        return;
      }
      // Copied, as Fastify's own reader does: a socket's chunk may be a view that keeps a larger read buffer alive.
      const body = Buffer.concat(chunks, received);
      if (coding === null) return finish(null, body);
      decodeBody(body, coding, limitBytes, (err, decoded) => {
        if (finished) return;
        if (err || !decoded) return finish(err);
        // The decoded body is what is held from here on.
        const grown = decoded.length - received;
        held.bytes += grown;
        this.heldBytes += grown;
        if (this.heldBytes > options.memoryLimitBytes) return finish(overloaded());
        finish(null, decoded);
      });
    };
    // The client left mid-body: nothing was accepted.
    const onError = (err: Error) => finish(err);
    const total = setTimeout(() => finish(new RelayError('RELAY_ERR_BODY_TIMEOUT', `the request body did not arrive within ${options.totalTimeoutMs} ms`, { headers: CLOSE })), options.totalTimeoutMs);
    const idle = setTimeout(() => finish(idleError(options.idleTimeoutMs)), options.idleTimeoutMs);
    total.unref();
    idle.unref();
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
  }
}

function overloaded(): RelayError {
  return new RelayError('RELAY_ERR_OVERLOADED', 'Relay holds as many request bodies as it may; retry shortly.', { headers: { ...CLOSE, 'retry-after': '1' } });
}

function tooLarge(limitBytes: number): RelayError {
  return new RelayError('RELAY_ERR_BODY_TOO_LARGE', `request body is larger than the limit of ${limitBytes} bytes (server.bodyLimitBytes)`);
}

function idleError(ms: number): RelayError {
  return new RelayError('RELAY_ERR_BODY_TIMEOUT', `the request body stalled: nothing arrived for ${ms} ms`, { headers: CLOSE });
}
