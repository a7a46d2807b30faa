// The one undici pool helper every vendor adapter uses: a keep-alive pool per upstream
// origin, timeouts from the host's spec, and cancellation through an AbortSignal.
import { Pool } from 'undici';
import type { UpstreamResponse } from '../hooks.ts';

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

export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.allSettled(all.map((p) => p.close()));
}
