// One client connection on the lean server (lean-server.ts): reads request heads and bodies from
// the socket, gives each POST to an inference-lane route to the lane with a LeanResponse, and
// takes the next request once that answer is flushed (pipelined requests wait their turn, as in
// Node). The first request that is anything else (another method or path, or a head
// request-head.ts does not accept) is handed over with the connection, its bytes unread, to Node's
// HTTP server, which serves it and everything after it on that connection.
import type { Socket } from 'node:net';
import type { InboundHttpRequest } from '../../hooks.ts';
import type { InferenceLane, LaneRoute } from '../inference-lane.ts';
import { BodyBytes } from '../body-bytes.ts';
import { LeanResponse, type LeanResponseOwner } from './lean-response.ts';
import { readRequestHead } from './request-head.ts';

export interface LeanConnectionHost {
  readonly lane: InferenceLane;
  readonly maxHeadBytes: number;
  readonly keepAliveSeconds: number;
  /** False once the server stopped listening: a finished answer then closes its connection. */
  readonly listening: boolean;
  /** Gives the socket to Node's HTTP server (its bytes not yet read are back in the socket). */
  handOver(socket: Socket): void;
  /** The connection is gone (closed, or handed over). */
  forget(connection: LeanConnection): void;
}

/** While an answer is being written, more than this many bytes of what comes next pauses reading. */
const AHEAD_MAX_BYTES = 64 * 1024;

type Phase = 'head' | 'body' | 'answering' | 'done';

export class LeanConnection implements LeanResponseOwner {
  private phase: Phase = 'head';
  /** Bytes received and not yet taken. */
  private chunks: Buffer[] = [];
  private size = 0;
  /** The bytes received so far were read as a head and found incomplete. */
  private headIncomplete = false;
  /** Body bytes of a refused request still to skip. */
  private discard = 0;
  private request: InboundHttpRequest | null = null;
  private route: LaneRoute | null = null;
  private bodyLength = 0;
  private response: LeanResponse | null = null;
  /** When the current phase began (ms); the server's sweep times out idle and slow heads by it. */
  since = Date.now();

  constructor(
    readonly socket: Socket,
    private readonly host: LeanConnectionHost,
  ) {
    socket.setNoDelay(true);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
  }

  get keepAliveSeconds(): number {
    return this.host.keepAliveSeconds;
  }

  /** Between requests, nothing of the next one received. */
  get idle(): boolean {
    return this.phase === 'head' && this.size === 0;
  }

  /** Receiving a request head (some of its bytes came). */
  get readingHead(): boolean {
    return this.phase === 'head' && this.size > 0;
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** A head that took too long: 408 and close, as Node's headersTimeout does. */
  timeOutHead(): void {
    this.phase = 'done';
    this.socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  }

  finished(response: LeanResponse, keepAlive: boolean): void {
    if (response !== this.response) return;
    this.response = null;
    this.request = null;
    this.route = null;
    if (!keepAlive || !this.host.listening) {
      this.phase = 'done';
      this.socket.end();
      return;
    }
    this.phase = 'head';
    this.since = Date.now();
    if (this.socket.isPaused()) this.socket.resume();
    this.advance();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.phase === 'done') return;
    if (this.phase === 'head' && this.size === 0 && this.discard === 0) this.since = Date.now();
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.phase === 'answering') {
      if (this.size > AHEAD_MAX_BYTES) this.socket.pause();
      return;
    }
    this.advance();
  };

  /** The client closed its side: as Node does (no half-open), the request in flight is abandoned. */
  private readonly onEnd = (): void => {
    this.socket.destroy();
  };

  private readonly onError = (): void => {
    // 'close' follows; a reset client is not Relay's error to log.
  };

  private readonly onClose = (): void => {
    this.phase = 'done';
    this.response?.socketClosed();
    this.host.forget(this);
  };

  private readonly onDrain = (): void => {
    this.response?.emit('drain');
  };

  /** Takes whatever the received bytes complete: heads, bodies, refused bodies to skip. */
  private advance(): void {
    for (;;) {
      if (this.phase === 'head') {
        if (this.discard > 0) {
          const skip = Math.min(this.discard, this.size);
          this.drop(skip);
          this.discard -= skip;
          if (this.discard > 0) return;
          this.since = Date.now();
        }
        if (this.size === 0) return;
        if (!this.startRequest()) return;
      }
      if (this.phase !== 'body' || this.size < this.bodyLength) return;
      const body = this.takeParts(this.bodyLength);
      this.phase = 'answering';
      this.host.lane.serveBody(this.request!, this.response!, this.route!, body);
      return;
    }
  }

  /** Reads the head; false when it is incomplete, was handed over, or was refused. */
  private startRequest(): boolean {
    // A head ends with an LF: once the bytes were read as an incomplete head, until a chunk brings
    // one they are not joined and read again (a head sent a byte at a time would otherwise cost a
    // copy of all of it per byte). Bytes that came while an answer was written have not been read.
    const last = this.chunks[this.chunks.length - 1]!;
    if (this.headIncomplete && this.chunks.length > 1 && this.size <= this.host.maxHeadBytes && !last.includes(0x0a)) return false;
    // Most heads come whole in the first chunk: read there, the bytes after them are not joined.
    let head = readRequestHead(this.chunks[0]!, this.host.maxHeadBytes);
    if (head === 'incomplete' && this.chunks.length > 1) head = readRequestHead(this.joined(), this.host.maxHeadBytes);
    this.headIncomplete = head === 'incomplete';
    if (head === 'incomplete') return false;
    const route = head === 'handover' ? undefined : this.host.lane.routeFor('POST', head.url);
    if (head === 'handover' || !route) {
      this.handOver();
      return false;
    }
    this.drop(head.headEnd);
    const lane = this.host.lane;
    const request = lane.request(head.url, head.headers);
    const response = new LeanResponse(this.socket, this, head.keepAlive);
    this.request = request;
    this.route = route;
    this.response = response;
    this.bodyLength = head.bodyLength;
    if (!lane.admit(request, response, route)) {
      this.phase = 'answering';
      this.discard = head.bodyLength;
      return false;
    }
    this.phase = 'body';
    return true;
  }

  private handOver(): void {
    this.phase = 'done';
    const socket = this.socket;
    socket.pause();
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', this.onError);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    this.host.forget(this);
    if (this.size > 0) {
      socket.unshift(this.joined());
      // Node's server reads a fresh socket's handle from C++ directly, past the bytes put back
      // here; marked as consumed, it reads through the socket, in order.
      const handle = (socket as unknown as { _handle?: { _consumed?: boolean } })._handle;
      if (handle) handle._consumed = true;
    }
    this.chunks = [];
    this.size = 0;
    this.host.handOver(socket);
    socket.resume();
  }

  /** All received bytes as one buffer. */
  private joined(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0]!;
  }

  /**
   * Removes the first `n` received bytes and returns them as the chunks they came in, the last one
   * cut where they end (no copy: see body-bytes.ts for why a body is not joined).
   */
  private takeParts(n: number): BodyBytes {
    const parts: Buffer[] = [];
    this.remove(n, parts);
    return new BodyBytes(parts, n);
  }

  /** Removes the first `n` received bytes (every request's head: nothing is allocated to hold them). */
  private drop(n: number): void {
    this.remove(n, null);
  }

  /** Removes the first `n` received bytes, cutting the chunk they end in; into `parts` when given. */
  private remove(n: number, parts: Buffer[] | null): void {
    const chunks = this.chunks;
    let i = 0;
    for (let need = n; need > 0;) {
      const chunk = chunks[i]!;
      if (chunk.length <= need) {
        parts?.push(chunk);
        need -= chunk.length;
        i++;
      } else {
        parts?.push(chunk.subarray(0, need));
        chunks[i] = chunk.subarray(need);
        need = 0;
      }
    }
    if (i > 0) this.chunks = chunks.slice(i);
    this.size -= n;
  }
}
