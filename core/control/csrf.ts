// Cross-site request protection for cookie-authenticated changes. A browser attaches the
// session cookie to a cross-site request, but cannot add a custom header to one without a CORS
// preflight, which Relay never grants; so a change (any method but GET/HEAD/OPTIONS) made
// with the cookie must carry `x-relay-csrf: 1`, and an Origin header, when present, must name
// this host. Bearer-token requests are exempt: no browser sends those on its own.
import type { FastifyRequest } from 'fastify';
import { RelayError } from '../errors.ts';

export const CSRF_HEADER = 'x-relay-csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** True when there is no Origin header, or it names the host the request was sent to. */
export function originMatchesHost(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false; // "null" (sandboxed frames, file://) and garbage
  }
}

export function assertSameOriginChange(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (request.headers[CSRF_HEADER] !== '1') {
    throw new RelayError('RELAY_ERR_CSRF', `a change made with the session cookie must send the header ${CSRF_HEADER}: 1`);
  }
  if (!originMatchesHost(request)) {
    throw new RelayError('RELAY_ERR_CSRF', 'the Origin of this request is not this host');
  }
}
