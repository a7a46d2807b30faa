// The one undici pool helper every vendor adapter uses: a keep-alive pool per upstream
// origin, timeouts from the host's spec, and cancellation through an AbortSignal.
import { Pool } from 'undici';
import type { UpstreamRequest, UpstreamResponse } from '../hooks.ts';

export interface SendOptions {
  method?: 'POST' | 'GET' | 'HEAD';
  headers: Record<string, string>;
  body?: Buffer | string;
  signal?: AbortSignal;
  /** Bound on waiting for response headers, and between body chunks (ms). */
  timeoutMs: number;
}

const pools = new Map<string, Pool>();

/** Keep-alive pool per origin: reusing connections saves a TCP handshake per request. */
export function upstreamPool(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: 10_000 } });
    pools.set(origin, pool);
  }
  return pool;
}

/** Joins a base URL (which may carry a path such as /v1) with an endpoint path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** Sends one request; resolves when the response headers arrived. */
export async function sendUpstream(url: string, options: SendOptions): Promise<UpstreamResponse> {
  const target = new URL(url);
  const res = await upstreamPool(target.origin).request({
    path: target.pathname + target.search,
    method: options.method ?? 'POST',
    headers: options.headers,
    body: options.body,
    signal: options.signal,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

/**
 * Sends an adapter's request to its route's host: `path` under the host's base URL, the
 * forwarded headers over `defaults`, the host's own extra headers, JSON content type, and the
 * adapter's credential headers (left out in proxy mode, where the caller's own credential is
 * among the forwarded headers).
 */
export function sendToHost(req: UpstreamRequest, path: string, credentialHeaders: (credential: string) => Record<string, string>, defaults: Record<string, string> = {}): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  const headers: Record<string, string> = { ...defaults, ...req.headers, ...(host.headers ?? {}), 'content-type': 'application/json' };
  if (req.credential !== null) Object.assign(headers, credentialHeaders(req.credential));
  return sendUpstream(joinUrl(host.baseUrl, path) + (req.search ?? ''), { headers, body: req.body, signal: req.signal, timeoutMs: host.timeoutMs });
}

export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}
