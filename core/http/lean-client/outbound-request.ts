// One request on its way to an upstream through the lean client: its head as written on the
// wire, its body, and what becomes of its answer (the caller's promise, then the body stream).
import { errors } from 'undici';
import { DispatchBody } from '../dispatch-body.ts';
import { HeaderNameVerdicts } from '../header-name-verdicts.ts';
import type { UpstreamResponse } from '../../hooks.ts';
import type { ResponseEvents, ResponseHeaders } from './response-parser.ts';

export interface OutboundOptions {
  method: 'POST' | 'GET' | 'HEAD';
  path: string;
  headers: Record<string, string>;
  /** Parts are written one after the other, in the head's writev. */
  body?: Buffer | string | readonly Buffer[];
  /** Bound on waiting for the answer's head, and between body reads (ms). */
  timeoutMs: number;
}

// Headers the client frames itself (as undici refuses them): the caller may not set these.
const REFUSED_HEADERS = new Set(['connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect']);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// undici's rule for header values: HTAB, visible ASCII and obs-text; never CR, LF or NUL.
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** What requestHead does with a header, by its name. */
const enum NameKind { Plain, Host, ContentLength, Connection, Refused }

/** Names already checked, and what they are (header-name-verdicts.ts). */
const nameKinds = new HeaderNameVerdicts<NameKind>();

function nameKind(name: string): NameKind {
  let kind = nameKinds.get(name);
  if (kind !== undefined) return kind;
  if (!TOKEN.test(name)) throw new errors.InvalidArgumentError(`invalid header name ${JSON.stringify(name)}`);
  const lower = name.toLowerCase();
  kind = lower === 'host' ? NameKind.Host
    : lower === 'content-length' ? NameKind.ContentLength
      : lower === 'connection' ? NameKind.Connection
        : REFUSED_HEADERS.has(lower) ? NameKind.Refused : NameKind.Plain;
  nameKinds.remember(name, kind);
  return kind;
}

/** The request head, ready for the socket (latin1); throws InvalidArgumentError on a header it cannot send. */
export function requestHead(options: OutboundOptions, host: string, bodyLength: number): string {
  let head = `${options.method} ${options.path} HTTP/1.1\r\n`;
  let hostLine = `host: ${host}\r\n`;
  let lines = '';
  for (const name in options.headers) {
    const value = options.headers[name]!;
    const kind = nameKind(name);
    if (BAD_VALUE.test(value)) throw new errors.InvalidArgumentError(`invalid ${name.toLowerCase()} header`);
    if (kind === NameKind.Plain) {
      lines += `${name}: ${value}\r\n`;
    } else if (kind === NameKind.Host) {
      hostLine = `host: ${value}\r\n`;
    } else if (kind === NameKind.Connection) {
      // As undici: the client frames its connection itself; any other value is refused.
      const lower = value.toLowerCase();
      if (lower !== 'keep-alive' && lower !== 'close') throw new errors.InvalidArgumentError('invalid connection header');
    } else if (kind === NameKind.Refused) {
      throw new errors.InvalidArgumentError(`invalid ${name.toLowerCase()} header`);
    }
    // NameKind.ContentLength: written from the body itself.
  }
  head += hostLine + 'connection: keep-alive\r\n' + lines;
  if (options.body !== undefined || options.method === 'POST') head += `content-length: ${bodyLength}\r\n`;
  return head + '\r\n';
}

type Phase = 'waiting' | 'head' | 'body' | 'settled';

/**
 * The answer's side: resolves the caller's promise at the head, then feeds a DispatchBody (the
 * same body type the undici path hands out) and tells the connection when to pause reading.
 */
export class OutboundRequest implements ResponseEvents {
  phase: Phase = 'waiting';
  /** When the current wait (for the head, or for more body) runs out; 0 while none is running. */
  deadline = 0;
  body: DispatchBody | null = null;
  /** Set by the connection carrying it: pause and resume its socket, or close it. */
  pauseSocket: (() => void) | null = null;
  resumeSocket: (() => void) | null = null;
  abortSocket: ((err: Error) => void) | null = null;
  /** Reading is paused for the reader (backpressure): the body timeout does not run, as in undici. */
  paused = false;
  /** The answer's Keep-Alive timeout (seconds), when it gave one. */
  keepAliveHint: number | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    readonly options: OutboundOptions,
    /** The head as written on the wire (requestHead()). */
    readonly head: string,
    readonly bodyLength: number,
    private readonly resolve: (res: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  /** Follows the caller's cancellation; `cancel` runs at most once. */
  listen(onAbort: ((fn: () => void) => () => void) | undefined, signal: AbortSignal | undefined, cancel: (err: Error) => void): void {
    if (onAbort) {
      this.unsubscribe = onAbort(() => cancel(new errors.RequestAbortedError()));
    } else if (signal) {
      const abort = () => cancel(signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError());
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      this.unsubscribe = () => signal.removeEventListener('abort', abort);
    }
  }

  /**
   * The head and body went out: the wait for the answer starts, and the body is let go (the
   * socket keeps what it has yet to flush).
   */
  sent(now: number): void {
    this.options.body = undefined;
    this.phase = 'head';
    this.deadline = this.options.timeoutMs > 0 ? now + this.options.timeoutMs : 0;
  }

  onHead(status: number, headers: ResponseHeaders): void {
    const keepAlive = headers['keep-alive'];
    if (typeof keepAlive === 'string') {
      const timeout = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i.exec(keepAlive);
      if (timeout) this.keepAliveHint = Number(timeout[1]);
    }
    this.phase = 'body';
    if (this.options.timeoutMs > 0) this.deadline = Date.now() + this.options.timeoutMs;
    this.body = new DispatchBody(() => {
      // The reader caught up: the body timeout counts again from now.
      this.paused = false;
      this.heard(Date.now());
      this.resumeSocket?.();
    }, (err) => this.abortSocket?.(err));
    this.resolve({ status, headers: headers as UpstreamResponse['headers'], body: this.body });
  }

  /** Bytes came: the body timeout starts again (once per socket read, not per chunk). */
  heard(now: number): void {
    if (this.phase === 'body' && this.options.timeoutMs > 0) this.deadline = now + this.options.timeoutMs;
  }

  onBody(chunk: Buffer): void {
    // The chunk is a view into the socket read's own buffer, which Node never reuses: kept as is.
    if (!this.body!.push(chunk)) {
      this.paused = true;
      this.pauseSocket?.();
    }
  }

  onEnd(): void {
    this.settle();
    this.body?.end();
  }

  /** Fails the request: its promise before the head, its body after. */
  fail(err: Error): void {
    if (this.phase === 'settled') return;
    const hadBody = this.body !== null;
    this.settle();
    if (hadBody) this.body!.fail(err);
    else this.reject(err);
  }

  /** The request is over: timers and cancellation stop. */
  private settle(): void {
    this.phase = 'settled';
    this.deadline = 0;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  get settled(): boolean {
    return this.phase === 'settled';
  }

  /** Which timeout ran out, for the sweep. */
  timeoutError(): Error {
    return this.phase === 'body' ? new errors.BodyTimeoutError() : new errors.HeadersTimeoutError();
  }
}
