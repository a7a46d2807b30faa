// The helpers vendor adapters send with: sendToHost (a path under the route's host, with its
// headers, timeout and connection settings) and sendUpstream (any URL). Both go through the Relay
// instance's UpstreamClient, which the kernel hands over on every UpstreamRequest.
import type { UpstreamRequest, UpstreamResponse } from '../hooks.ts';
import type { SendOptions } from './upstream-client.ts';
import { cancellationOf } from './cancellation.ts';

export type { SendOptions } from './upstream-client.ts';

const JSON_CONTENT = { 'content-type': 'application/json' };

/** Joins a base URL (which may carry a path such as /v1) with an endpoint path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** Sends one request for `req` to `url`; resolves when the response head arrived. Aborts with the client. */
export function sendUpstream(req: UpstreamRequest, url: string, options: Omit<SendOptions, 'signal'>): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  const cancellation = cancellationOf(req);
  const abort = cancellation ? { cancellation } : { signal: req.signal };
  return req.client.send(url, Object.assign({ transport: { maxConnections: host.maxConnections, http2: host.http2 } }, options, abort));
}

/**
 * Sends an adapter's request to its route's host: `path` under the host's base URL, the
 * forwarded headers over `defaults`, the host's own extra headers, JSON content type, and the
 * adapter's credential headers (left out in proxy mode, where the caller's own credential is
 * among the forwarded headers).
 */
export function sendToHost(req: UpstreamRequest, path: string, credentialHeaders: (credential: string) => Record<string, string>, defaults: Record<string, string> = {}): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  const headers: Record<string, string> = Object.assign({}, defaults, req.headers, host.headers, JSON_CONTENT);
  if (req.credential !== null) Object.assign(headers, credentialHeaders(req.credential));
  return sendUpstream(req, joinUrl(host.baseUrl, path) + (req.search ?? ''), { headers, body: req.body, timeoutMs: host.timeoutMs });
}
