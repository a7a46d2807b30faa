// The answer to one request on a lean connection (lean-connection.ts): the part of Node's
// ServerResponse that the inference lane and the pipeline use (ClientResponse), written straight to
// the socket. Framing as Node does it: Content-Length when the head gives one (or end() is given the
// whole body before the head went), chunked otherwise, none for 204 and 304; Date, Connection and
// Keep-Alive added.
//
// Measured reason for not using ServerResponse: Node's request and response objects, streams and
// header bookkeeping were ~12 us of CPU per request on the bench's chat case (a bare proxy: 71 us a
// request on node:http, 60 on a socket), about an eighth of Relay's whole budget.
import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientResponse } from '../client-response.ts';

/** Below this size a chunk is copied behind its head or chunk-size line: one write, not two. */
const COPY_MAX_BYTES = 16 * 1024;
/** Header values Node would refuse to send (ERR_INVALID_CHAR): CR, LF, NUL and other controls. */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

let dateAt = 0;
let dateValue = '';
/** The Date header's value, made at most once a second (as Node caches it). */
function httpDate(): string {
  const now = Date.now();
  if (now - dateAt >= 1000) {
    dateAt = now - (now % 1000);
    dateValue = new Date(now).toUTCString();
  }
  return dateValue;
}

export interface LeanResponseOwner {
  /** Seconds announced in Keep-Alive (the server's keep-alive timeout). */
  readonly keepAliveSeconds: number;
  /** Called once the whole answer is flushed (`keepAlive`: the connection may carry another request). */
  finished(response: LeanResponse, keepAlive: boolean): void;
}

export class LeanResponse extends EventEmitter implements ClientResponse {
  statusCode = 200;
  /** True from writeHead on, as in Node (the head is fixed then, though not yet on the wire). */
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  private pending: Record<string, string | string[]> | null = null;
  /** The head is on its way to the socket. */
  private headWritten = false;
  private chunked = false;
  private bodyless = false;
  /** Bytes still owed when the head gave a Content-Length; -1 without one. */
  private remaining = -1;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly owner: LeanResponseOwner,
    private keepAlive: boolean,
  ) {
    super();
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersSent) throw new Error('Cannot set headers after they are sent to the client');
    checkHeader(name, value);
    (this.pending ??= {})[name.toLowerCase()] = typeof value === 'number' ? String(value) : value as string | string[];
    return this;
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    if (this.headersSent) throw new Error('Cannot write headers after they are sent to the client');
    this.statusCode = status;
    if (headers) {
      for (const name in headers) if (headers[name] !== undefined) checkHeader(name, headers[name]);
      const merged = this.pending ?? {};
      for (const name in headers) {
        const value = headers[name];
        if (value === undefined) continue;
        if (this.pending && name.toLowerCase() in this.pending && name !== name.toLowerCase()) delete merged[name.toLowerCase()];
        merged[name] = typeof value === 'number' ? String(value) : value as string | string[];
      }
      this.pending = merged;
    }
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    if (this.headWritten || this.destroyed) return;
    corkUntilNextTick(this.socket);
    this.socket.write(this.head(-1), 'latin1');
  }

  write(chunk: Buffer | string): boolean {
    if (this.writableEnded) throw new Error('write after end');
    if (this.destroyed) return false;
    return this.send(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, false, -1, undefined);
  }

  end(chunk?: Buffer | string): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    if (this.destroyed) return this;
    const buf = chunk === undefined ? null : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    // The whole body before the head went: its length is known (as Node sets Content-Length).
    const length = !this.headWritten && !this.hasHeader('content-length') && !this.hasHeader('transfer-encoding') ? buf?.length ?? 0 : -1;
    this.send(buf, true, length, () => this.onFlushed());
    // Fewer bytes than the head announced: the client would wait for the rest; only closing
    // tells it (after what was written, hence end() and not destroy()).
    if (this.remaining > 0) {
      this.destroyed = true;
      this.socket.end();
    }
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.socket.destroy();
    return this;
  }

  /** The socket closed (client gone, or after destroy()). */
  socketClosed(): void {
    this.destroyed = true;
    this.emitClose();
  }

  private onFlushed(): void {
    if (this.destroyed) return;
    this.writableFinished = true;
    this.emit('finish');
    this.emitClose();
    this.owner.finished(this, this.keepAlive);
  }

  private emitClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  /**
   * Writes `buf` framed (the head first if it has not gone; `length` >= 0: the Content-Length to
   * give it), and the chunked terminator when `last`. `flushed` is called once all of it is out.
   */
  private send(buf: Buffer | null, last: boolean, length: number, flushed: (() => void) | undefined): boolean {
    corkUntilNextTick(this.socket);
    const head = this.headWritten ? null : this.head(length);
    const terminator = last && this.chunked ? '0\r\n\r\n' : '';
    if (this.bodyless || buf === null || buf.length === 0) {
      const text = (head ?? '') + terminator;
      if (text === '' && !flushed) return !this.socket.writableNeedDrain;
      return this.socket.write(text, 'latin1', flushed);
    }
    if (this.remaining >= 0) {
      if (buf.length > this.remaining) {
        // More bytes than the head announced would be read as the next answer: never send them.
        this.destroy();
        return false;
      }
      this.remaining -= buf.length;
    }
    const prefix = this.chunked ? `${head ?? ''}${buf.length.toString(16)}\r\n` : head ?? '';
    const suffix = this.chunked ? `\r\n${terminator}` : '';
    if (prefix === '' && suffix === '') return this.socket.write(buf, flushed);
    if (buf.length <= COPY_MAX_BYTES) {
      // One buffer, one write: prefix, body, suffix.
      const out = Buffer.allocUnsafe(prefix.length + buf.length + suffix.length);
      out.write(prefix, 0, 'latin1');
      buf.copy(out, prefix.length);
      out.write(suffix, prefix.length + buf.length, 'latin1');
      return this.socket.write(out, flushed);
    }
    if (prefix) this.socket.write(prefix, 'latin1');
    let ok = this.socket.write(buf, suffix ? undefined : flushed);
    if (suffix) ok = this.socket.write(suffix, 'latin1', flushed);
    return ok;
  }

  private hasHeader(lowerName: string): boolean {
    if (!this.pending) return false;
    for (const name in this.pending) if (name.toLowerCase() === lowerName) return true;
    return false;
  }

  /** The head, once: status line, headers, and the framing (`length` >= 0: a Content-Length to add). */
  private head(length: number): string {
    this.headWritten = true;
    this.headersSent = true;
    const status = this.statusCode;
    this.bodyless = status === 204 || status === 304 || (status >= 100 && status < 200);
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    let framed = false;
    for (const name in this.pending) {
      const value = this.pending[name]!;
      const lower = name.toLowerCase();
      if (lower === 'content-length') {
        framed = true;
        this.remaining = this.bodyless ? -1 : Number(value);
      } else if (lower === 'transfer-encoding') {
        framed = true;
        this.chunked = !this.bodyless;
      } else if (lower === 'connection') {
        // Asked to close (the lane does for 413 and 503): said once below, with Relay's own headers.
        if (/(^|[\s,])close($|[\s,])/i.test(String(value))) this.keepAlive = false;
        continue;
      } else if (lower === 'keep-alive' || lower === 'date') continue;
      if (typeof value === 'string') head += `${name}: ${value}\r\n`;
      else for (const one of value) head += `${name}: ${one}\r\n`;
    }
    if (!framed && !this.bodyless) {
      if (length >= 0) {
        head += `Content-Length: ${length}\r\n`;
        this.remaining = length;
      } else {
        head += 'Transfer-Encoding: chunked\r\n';
        this.chunked = true;
      }
    }
    head += `Date: ${httpDate()}\r\n`;
    head += this.keepAlive ? `Connection: keep-alive\r\nKeep-Alive: timeout=${this.owner.keepAliveSeconds}\r\n\r\n` : 'Connection: close\r\n\r\n';
    return head;
  }
}

/**
 * Writes made in one turn of the event loop leave in one syscall, as Node's ServerResponse does it:
 * a stream's last chunk and its end, a head flushed and the first chunk. Measured reason: without
 * it the chat stream's last chunk and terminator went in two writes (10.7% of Relay's CPU in
 * socket writes on the chat stream, against 4.8% in one writev).
 */
function corkUntilNextTick(socket: Socket): void {
  if (socket.writableCorked > 0) return;
  socket.cork();
  process.nextTick(uncork, socket);
}

function uncork(socket: Socket): void {
  socket.uncork();
}

function checkHeader(name: string, value: unknown): void {
  if (!TOKEN.test(name)) throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
  const values = Array.isArray(value) ? value : [value];
  for (const one of values) {
    if (INVALID_VALUE.test(String(one))) throw new TypeError(`Invalid character in header content ["${name}"]`);
  }
}
