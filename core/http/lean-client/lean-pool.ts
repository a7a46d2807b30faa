// The lean client's keep-alive pool for one upstream origin: an idle connection when there is
// one (the most recently used, which is the least likely to have been closed by the upstream), a
// new one up to the limit, else a first-come queue. One sweep timer for all pools runs the
// connect, head, body and idle timeouts, so a request starts no timer of its own.
import { OutboundRequest, requestHead, type OutboundOptions } from './outbound-request.ts';
import { UpstreamConnection, type ConnectionOwner, type Origin } from './upstream-connection.ts';
import type { UpstreamResponse } from '../../hooks.ts';
import { wireLength } from '../body-bytes.ts';

export interface Cancellation {
  signal?: AbortSignal;
  onAbort?: (fn: () => void) => () => void;
}

const SWEEP_MS = 250;
const pools = new Set<LeanPool>();
let sweep: NodeJS.Timeout | null = null;

export class LeanPool implements ConnectionOwner {
  private readonly idle: UpstreamConnection[] = [];
  private readonly all = new Set<UpstreamConnection>();
  private readonly waiting: OutboundRequest[] = [];
  private closing: (() => void) | null = null;

  constructor(readonly origin: Origin, private readonly maxConnections: number) {
    pools.add(this);
    if (!sweep) {
      sweep = setInterval(sweepPools, SWEEP_MS);
      sweep.unref();
    }
  }

  /** Sends one request; resolves when the answer's head has come. */
  send(options: OutboundOptions, cancellation: Cancellation): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      const bodyLength = options.body === undefined ? 0 : wireLength(options.body);
      this.start(new OutboundRequest(options, requestHead(options, this.origin.host, bodyLength), bodyLength, resolve, reject), cancellation);
    });
  }

  // A method of its own: the cancel callback, which lives as long as the request, closes over the
  // request alone. Made in send()'s executor, it kept send()'s scope, the caller's options with
  // the request body among them, until the answer ended (a heap snapshot of long streams).
  private start(request: OutboundRequest, cancellation: Cancellation): void {
    request.listen(cancellation.onAbort, cancellation.signal, (err) => this.cancel(request, err));
    if (request.settled) return;
    if (this.closing) return request.fail(new Error('the upstream pool is closed'));
    this.dispatch(request);
  }

  released(connection: UpstreamConnection): void {
    if (this.closing) return connection.destroy(null);
    const next = this.nextWaiting();
    if (next) connection.start(next);
    else this.idle.push(connection);
  }

  closed(connection: UpstreamConnection): void {
    this.all.delete(connection);
    const at = this.idle.lastIndexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.closing) {
      if (this.all.size === 0) this.closing();
      return;
    }
    const next = this.all.size < this.maxConnections ? this.nextWaiting() : null;
    if (next) this.open(next);
  }

  /** Closes idle connections now and the others as their answers end. */
  close(): Promise<void> {
    pools.delete(this);
    if (pools.size === 0 && sweep) {
      clearInterval(sweep);
      sweep = null;
    }
    return new Promise((resolve) => {
      this.closing = resolve;
      for (const request of this.waiting.splice(0)) request.fail(new Error('the upstream pool is closed'));
      for (const connection of [...this.idle]) connection.destroy(null);
      if (this.all.size === 0) resolve();
    });
  }

  /** Runs the timeouts of this pool's connections. */
  check(now: number): void {
    for (const connection of this.all) connection.check(now);
  }

  private dispatch(request: OutboundRequest): void {
    const now = Date.now();
    while (this.idle.length > 0) {
      const connection = this.idle.pop()!;
      if (!connection.destroyed && now < connection.expiresAt) return connection.start(request);
      connection.destroy(null);
    }
    if (this.all.size < this.maxConnections) this.open(request);
    else this.waiting.push(request);
  }

  private open(request: OutboundRequest): void {
    this.all.add(new UpstreamConnection(this.origin, this, request));
  }

  private nextWaiting(): OutboundRequest | null {
    while (this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      if (!next.settled) return next;
    }
    return null;
  }

  private cancel(request: OutboundRequest, err: Error): void {
    if (request.settled) return;
    if (request.abortSocket) return request.abortSocket(err); // on a connection: it closes
    const at = this.waiting.indexOf(request);
    if (at >= 0) this.waiting.splice(at, 1);
    request.fail(err);
  }
}

function sweepPools(): void {
  const now = Date.now();
  for (const pool of pools) pool.check(now);
}

/** The pool's origin from a URL's origin string (http: or https:). */
export function originOf(url: URL): Origin {
  const tls = url.protocol === 'https:';
  if (!tls && url.protocol !== 'http:') throw new TypeError(`the upstream URL's scheme must be http or https, not ${url.protocol}`);
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  // URL keeps IPv6 literals bracketed; sockets want them bare.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { tls, hostname, port, host: url.host };
}
