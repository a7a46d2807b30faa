// The one upstream helper every vendor adapter uses: a keep-alive pool per upstream origin,
// timeouts from the host's spec, and cancellation (an AbortSignal, or onAbort). Requests go
// through the lean client (lean-client/) unless `upstream.leanHttp` is off, then through undici.
import { Pool, errors, util, type Dispatcher } from 'undici';
import { DispatchBody } from './dispatch-body.ts';
import { LeanPool, originOf } from './lean-client/lean-pool.ts';
import type { UpstreamRequest, UpstreamResponse } from '../hooks.ts';
import { wireBody } from './body-bytes.ts';

export interface SendOptions {
  method?: 'POST' | 'GET' | 'HEAD';
  headers: Record<string, string>;
  /** As parts (BodyBytes.parts), the lean client writes them as they are. */
  body?: Buffer | string | readonly Buffer[];
  signal?: AbortSignal;
  /** Cancellation without an AbortSignal (see UpstreamRequest.onAbort); preferred over signal. */
  onAbort?: (fn: () => void) => () => void;
  /** Bound on waiting for response headers, and between body chunks (ms). */
  timeoutMs: number;
}

const pools = new Map<string, Pool>();
const leanPools = new Map<string, LeanPool>();
/** Connections per origin, for either client. */
const MAX_CONNECTIONS = 256;
let leanClient = true;

/** Chooses the client sendUpstream uses (the config's upstream.leanHttp); for the whole process. */
export function useLeanUpstreamClient(enabled: boolean): void {
  leanClient = enabled;
}

/** Keep-alive pool per origin: reusing connections saves a TCP handshake per request. */
export function upstreamPool(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: MAX_CONNECTIONS, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: 10_000 } });
    pools.set(origin, pool);
  }
  return pool;
}

/** Joins a base URL (which may carry a path such as /v1) with an endpoint path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** Sends one request; resolves when the response headers arrived. */
export function sendUpstream(url: string, options: SendOptions): Promise<UpstreamResponse> {
  if (leanClient) return sendLean(url, options);
  return new Promise((resolve, reject) => {
    const target = splitUrl(url); // a malformed URL throws here, which rejects
    const call = new UpstreamCall(resolve, reject);
    call.listen(options);
    // dispatch with our own handler, not request(): see dispatch-body.ts for the measured reason.
    upstreamPool(target.origin).dispatch({
      path: target.path,
      method: options.method ?? 'POST',
      headers: options.headers,
      body: joinParts(options.body),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    }, call);
  });
}

/** A body for undici, which takes one Buffer or string. */
function joinParts(body: SendOptions['body']): Buffer | string | undefined {
  return body === undefined || typeof body === 'string' || Buffer.isBuffer(body) ? body : Buffer.concat(body);
}

function sendLean(url: string, options: SendOptions): Promise<UpstreamResponse> {
  let target: ParsedUrl;
  try {
    target = splitUrl(url);
  } catch (err) {
    return Promise.reject(err);
  }
  let pool = leanPools.get(target.origin);
  if (!pool) {
    pool = new LeanPool(target.lean, MAX_CONNECTIONS);
    leanPools.set(target.origin, pool);
  }
  return pool.send({
    method: options.method ?? 'POST', path: target.path, headers: options.headers, body: options.body, timeoutMs: options.timeoutMs,
  }, options);
}

interface ParsedUrl {
  origin: string;
  path: string;
  lean: ReturnType<typeof originOf>;
}

const parsedUrls = new Map<string, ParsedUrl>();

/** Origin and path of a URL; cached, since a gateway sends to the same few URLs (new URL() measured 283 ns, the lookup 11 ns). */
function splitUrl(url: string): ParsedUrl {
  let parsed = parsedUrls.get(url);
  if (!parsed) {
    const target = new URL(url);
    parsed = { origin: target.origin, path: target.pathname + target.search, lean: originOf(target) };
    if (parsedUrls.size >= 1024) parsedUrls.clear();
    parsedUrls.set(url, parsed);
  }
  return parsed;
}

/** undici's dispatch callbacks for one request: resolves at the headers, then feeds the body. */
class UpstreamCall implements Dispatcher.DispatchHandler {
  private abort: ((err: Error) => void) | null = null;
  private body: DispatchBody | null = null;
  private aborted: Error | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly resolve: (res: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  /** Follows the caller's cancellation: onAbort when given, else the AbortSignal. */
  listen(options: Pick<SendOptions, 'signal' | 'onAbort'>): void {
    const cancel = (err: Error) => {
      this.aborted = err;
      this.abort?.(err);
    };
    if (options.onAbort) {
      this.unsubscribe = options.onAbort(() => cancel(new errors.RequestAbortedError()));
    } else if (options.signal) {
      const signal = options.signal;
      const onAbort = () => cancel(abortError(signal));
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.unsubscribe = () => signal.removeEventListener('abort', onAbort);
    }
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.aborted) abort(this.aborted);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the final answer is still to come
    const body = new DispatchBody(resume, (err) => this.abort?.(err));
    this.body = body;
    this.resolve({ status: statusCode, headers: util.parseHeaders(rawHeaders) as UpstreamResponse['headers'], body });
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.body!.push(chunk);
  }

  onComplete(): void {
    this.done();
    this.body?.end();
  }

  onError(err: Error): void {
    this.done();
    if (this.body) this.body.fail(err);
    else this.reject(err);
  }

  private done(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError();
}

/**
 * Sends an adapter's request to its route's host: `path` under the host's base URL, the
 * forwarded headers over `defaults`, the host's own extra headers, JSON content type, and the
 * adapter's credential headers (left out in proxy mode, where the caller's own credential is
 * among the forwarded headers).
 */
export function sendToHost(req: UpstreamRequest, path: string, credentialHeaders: (credential: string) => Record<string, string>, defaults: Record<string, string> = {}): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  // Object.assign, not `{ ...defaults, ...req.headers, ... }`: in Node 20's V8 an object literal
  // that starts with a spread and goes on (more spreads or members) takes a slow path: 2.5 us for
  // four headers, 17 us for a Claude Code request's fifteen, on every request (Object.assign:
  // 0.14 us). `{ key, ...spread }` does not; `{ ...spread }` alone does not.
  const headers: Record<string, string> = Object.assign({}, defaults, req.headers, host.headers, { 'content-type': 'application/json' });
  if (req.credential !== null) Object.assign(headers, credentialHeaders(req.credential));
  const options: SendOptions = { headers, body: wireBody(req), timeoutMs: host.timeoutMs };
  // onAbort when the kernel offers it: reading req.signal would make an AbortSignal for nothing.
  if (req.onAbort) options.onAbort = req.onAbort;
  else options.signal = req.signal;
  return sendUpstream(joinUrl(host.baseUrl, path) + (req.search ?? ''), options);
}

/** The origins each client holds a pool for (which client the process's requests went through). */
export function upstreamPoolOrigins(): { lean: string[]; undici: string[] } {
  return { lean: [...leanPools.keys()], undici: [...pools.keys()] };
}

export async function closeUpstreamPools(): Promise<void> {
  const all: Array<{ close(): Promise<void> }> = [...pools.values(), ...leanPools.values()];
  pools.clear();
  leanPools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}
