// One keep-alive connection to an upstream: it carries one request at a time (no pipelining),
// and goes back to its pool only after an answer read to its exact end with nothing after it.
// Anything else (bytes nobody asked for, a parse error, a close mid-answer) closes it, so a
// misread answer can never reach the next caller.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { errors } from 'undici';
import { ResponseParser } from './response-parser.ts';
import type { OutboundRequest } from './outbound-request.ts';

export interface Origin {
  tls: boolean;
  hostname: string;
  port: number;
  /** The Host header: host, and port when not the scheme's default. */
  host: string;
}

export interface ConnectionOwner {
  /** The connection finished an answer and can carry another request. */
  released(connection: UpstreamConnection): void;
  /** The connection is gone. */
  closed(connection: UpstreamConnection): void;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** Idle life when the upstream gives no Keep-Alive hint. */
const DEFAULT_IDLE_MS = 30_000;
/** A hint is shortened by this much, so Relay never sends on a connection the upstream is closing. */
const IDLE_MARGIN_MS = 1_000;
const MAX_IDLE_MS = 600_000;

export class UpstreamConnection {
  private readonly socket: Socket;
  private connected = false;
  private current: OutboundRequest | null = null;
  private parser: ResponseParser | null = null;
  /** Requests this connection finished: a reused connection closed before answering is the keep-alive race. */
  private served = 0;
  private idleMs = DEFAULT_IDLE_MS;
  /** When an idle connection expires, or a connect attempt gives up. */
  expiresAt: number;
  destroyed = false;

  constructor(private readonly origin: Origin, private readonly owner: ConnectionOwner, first: OutboundRequest) {
    this.take(first);
    this.expiresAt = Date.now() + CONNECT_TIMEOUT_MS;
    const options = { host: origin.hostname, port: origin.port };
    this.socket = origin.tls
      ? tlsConnect({ ...options, servername: isIP(origin.hostname) ? undefined : origin.hostname, ALPNProtocols: ['http/1.1'] }, this.onConnect)
      : netConnect(options, this.onConnect);
    this.socket.on('data', this.onData);
    this.socket.on('end', this.onEnd);
    this.socket.on('error', this.onError);
    this.socket.on('close', this.onClose);
  }

  /** Sends a request on this (idle, connected) connection. */
  start(request: OutboundRequest): void {
    this.take(request);
    this.socket.ref();
    this.write(request);
  }

  /** The request is this connection's from now on: its cancellation closes it. */
  private take(request: OutboundRequest): void {
    this.current = request;
    request.pauseSocket = () => this.socket.pause();
    request.resumeSocket = () => { if (this.current === request) this.socket.resume(); };
    request.abortSocket = (err) => { if (this.current === request) this.destroy(err); };
  }

  /** Timers, run by the pool's sweep: connect, head and body timeouts, idle expiry. */
  check(now: number): void {
    if (this.destroyed) return;
    if (!this.connected) {
      if (now >= this.expiresAt) this.destroy(new errors.ConnectTimeoutError());
      return;
    }
    const request = this.current;
    if (request) {
      if (request.deadline !== 0 && !request.paused && now >= request.deadline) this.destroy(request.timeoutError());
    } else if (now >= this.expiresAt) {
      this.destroy(null);
    }
  }

  destroy(err: Error | null): void {
    if (this.destroyed) return;
    this.destroyed = true;
    const request = this.current;
    this.current = null;
    this.socket.destroy();
    if (request && err) request.fail(err);
    this.owner.closed(this);
  }

  private readonly onConnect = (): void => {
    this.connected = true;
    this.socket.setNoDelay(true); // a request's head and body must not wait for an ACK (Nagle)
    this.socket.setKeepAlive(true, 60_000);
    if (this.current) this.write(this.current);
  };

  private write(request: OutboundRequest): void {
    this.parser = new ResponseParser(request, request.options.method === 'HEAD');
    // One writev for head and body.
    this.socket.cork();
    this.socket.write(request.head, 'latin1');
    if (request.bodyLength > 0) {
      const body = request.options.body!;
      if (typeof body === 'string' || Buffer.isBuffer(body)) this.socket.write(body);
      else for (const part of body) this.socket.write(part);
    }
    this.socket.uncork();
    request.sent(Date.now());
  }

  private readonly onData = (data: Buffer): void => {
    const request = this.current;
    const parser = this.parser;
    if (!request || !parser) return this.destroy(null); // bytes nobody asked for
    let used: number;
    try {
      used = parser.feed(data);
    } catch (err) {
      return this.destroy(err as Error);
    }
    if (!parser.done) return request.heard(Date.now());
    // Bytes past the answer's end, or a request body still being written: not reusable.
    if (used < data.length || this.socket.writableLength > 0 || !parser.reusable) return this.destroy(null);
    this.served++;
    this.current = null;
    this.parser = null;
    this.noteIdleHint(request);
    this.socket.unref();
    this.socket.resume();
    this.owner.released(this);
  };

  /** The answer's Keep-Alive: timeout=N sets how long the connection may sit idle. */
  private noteIdleHint(request: OutboundRequest): void {
    const hint = request.keepAliveHint;
    if (hint !== null) this.idleMs = Math.min(Math.max(hint * 1000 - IDLE_MARGIN_MS, 0), MAX_IDLE_MS);
    this.expiresAt = Date.now() + this.idleMs;
  }

  private readonly onEnd = (): void => {
    // The upstream closed its side: a close-delimited body ends here; anything else is cut.
    this.finishAtClose();
  };

  private readonly onError = (err: Error): void => {
    this.destroy(err);
  };

  private readonly onClose = (): void => {
    this.finishAtClose();
  };

  private finishAtClose(): void {
    if (this.destroyed) return;
    const request = this.current;
    const parser = this.parser;
    if (request && parser?.endsAtClose) {
      parser.close();
      this.current = null;
    }
    const cut = this.served > 0 && parser !== null && !parser.started
      ? new errors.SocketError('other side closed (the upstream closed a kept-alive connection as the request went out)')
      : new errors.SocketError('other side closed');
    this.destroy(cut);
  }
}
