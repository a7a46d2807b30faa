// Bounds on request bodies while they arrive (a Fastify preParsing hook on inference routes): a
// deadline for the whole body and for the gap between two reads, and a process-wide bound on the
// bytes that bodies in flight hold. Without them, keyless clients that send all but the last byte
// of large bodies could hold the process's memory for as long as they like.
import { Transform, type TransformCallback } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { RelayError } from '../errors.ts';

export interface BodyGuardOptions {
  totalTimeoutMs: number;
  idleTimeoutMs: number;
  memoryLimitBytes: number;
}

const CLOSE = { connection: 'close' };

export class BodyGuard {
  /** Bytes of request bodies read and not yet answered, across every request. */
  heldBytes = 0;

  constructor(private readonly options: BodyGuardOptions) {}

  /** Wraps a request's payload stream; `res` closing returns its bytes to the bound. */
  guard(payload: NodeJS.ReadableStream, res: ServerResponse): NodeJS.ReadableStream {
    let held = 0;
    const release = () => {
      this.heldBytes -= held;
      held = 0;
    };
    res.once('close', release);
    const options = this.options;
    const fail = (err: RelayError) => {
      clearTimeout(total);
      clearTimeout(idle);
      stream.destroy(err);
    };
    const total = setTimeout(() => fail(new RelayError('RELAY_ERR_BODY_TIMEOUT', `the request body did not arrive within ${options.totalTimeoutMs} ms`, { headers: CLOSE })), options.totalTimeoutMs);
    let idle = setTimeout(() => fail(idleError(options.idleTimeoutMs)), options.idleTimeoutMs);
    const stream = new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) => {
        held += chunk.length;
        this.heldBytes += chunk.length;
        if (this.heldBytes > options.memoryLimitBytes) {
          clearTimeout(total);
          clearTimeout(idle);
          callback(new RelayError('RELAY_ERR_OVERLOADED', 'Relay holds as many request bodies as it may; retry shortly.', { headers: { ...CLOSE, 'retry-after': '1' } }));
          return;
        }
        idle.refresh();
        callback(null, chunk);
      },
      flush: (callback: TransformCallback) => {
        clearTimeout(total);
        clearTimeout(idle);
        callback();
      },
    });
    // The client left mid-body: nothing was accepted; the timers must not outlive the request.
    payload.once('error', (err: Error) => fail(err as RelayError));
    res.once('close', () => {
      clearTimeout(total);
      clearTimeout(idle);
    });
    idle = idle.unref();
    total.unref();
    return payload.pipe(stream);
  }
}

function idleError(ms: number): RelayError {
  return new RelayError('RELAY_ERR_BODY_TIMEOUT', `the request body stalled: nothing arrived for ${ms} ms`, { headers: CLOSE });
}
