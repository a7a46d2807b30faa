// The control plane's one authentication check: a global onRequest hook. A guarded route
// (route-security.ts) needs `Authorization: Bearer <RELAY_ADMIN_TOKEN>` or a live session
// cookie (GET /metrics also takes Bearer <RELAY_METRICS_TOKEN>, which opens nothing else); a cookie-authenticated change must also pass the CSRF check. Unknown /api/* paths
// are guarded too, so without credentials they answer 401 and reveal nothing of the routes.
// A viewer's session reads (GET) and nothing else, bar routes marked `anyRole` (sign-out, their
// own password) and never routes marked `adminOnly`: anything else is a 403.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeEqual } from '../crypto/relay-keys.ts';
import { RelayError } from '../errors.ts';
import { assertSameOriginChange } from './csrf.ts';
import { requestNeedsCredentials } from './route-security.ts';
import type { AdminRole } from './admin-users.ts';
import { SESSION_COOKIE, type SessionStore } from './sessions.ts';
import { clearSessionCookie } from './session-cookie.ts';

export type ControlPrincipal =
  | { kind: 'admin-token' }
  /** RELAY_METRICS_TOKEN: Prometheus's credential, good for GET /metrics and nothing else. */
  | { kind: 'metrics-token' }
  | { kind: 'user'; userId: string; username: string; role: AdminRole; sessionToken: string };

/** Route config the guard reads. */
export interface ControlRouteConfig {
  public?: boolean;
  /** A viewer may call it whatever the method (sign-out, changing one's own password). */
  anyRole?: boolean;
  /** Only an admin may call it, even to read (the user list). */
  adminOnly?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who called a guarded control route; null on public routes. */
    controlPrincipal: ControlPrincipal | null;
  }
}

export interface AuthGuardOptions {
  sessions: SessionStore;
  adminToken: string | null;
  /** RELAY_METRICS_TOKEN; null when unset. */
  metricsToken: string | null;
  secureCookies: boolean;
}

/** The one request a metrics token may make: a scrape. */
function isMetricsScrape(request: FastifyRequest): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && request.routeOptions.url === '/metrics';
}

function unauthenticated(message: string, headers?: Record<string, string>): RelayError {
  return new RelayError('RELAY_ERR_UNAUTHENTICATED', message, { headers });
}

export function sessionTokenOf(app: FastifyInstance, request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const token = app.parseCookie(header)[SESSION_COOKIE];
  return token ? token : null;
}

export async function authenticateControl(app: FastifyInstance, request: FastifyRequest, options: AuthGuardOptions): Promise<ControlPrincipal> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    // A bearer credential is judged alone: a wrong token does not fall back to the cookie.
    if (match && options.adminToken !== null && safeEqual(match[1], options.adminToken)) return { kind: 'admin-token' };
    if (match && options.metricsToken !== null && safeEqual(match[1], options.metricsToken)) {
      if (isMetricsScrape(request)) return { kind: 'metrics-token' };
      throw new RelayError('RELAY_ERR_FORBIDDEN', 'the metrics token (RELAY_METRICS_TOKEN) only reads GET /metrics');
    }
    throw unauthenticated('the Authorization header does not carry the admin token');
  }
  const token = sessionTokenOf(app, request);
  if (token !== null) {
    const user = await options.sessions.lookup(token);
    if (user) return { kind: 'user', userId: user.userId, username: user.username, role: user.role, sessionToken: token };
    throw unauthenticated('the session has expired or was ended; sign in again', { 'set-cookie': clearSessionCookie(app, request, options.secureCookies) });
  }
  throw unauthenticated('sign in, or send Authorization: Bearer <RELAY_ADMIN_TOKEN>');
}

/** Whether the caller signed in with the viewer role (the admin token and admin users are not viewers). */
export function callerIsViewer(request: FastifyRequest): boolean {
  const principal = request.controlPrincipal;
  return principal?.kind === 'user' && principal.role !== 'admin';
}

/** Whether a viewer may make this request: reads, except admin-only routes, and the anyRole routes. */
export function viewerMayCall(request: FastifyRequest): boolean {
  const config = (request.routeOptions.config ?? {}) as ControlRouteConfig;
  if (config.anyRole === true) return true;
  return (request.method === 'GET' || request.method === 'HEAD') && config.adminOnly !== true;
}

export function installAuthGuard(app: FastifyInstance, options: AuthGuardOptions): void {
  app.decorateRequest('controlPrincipal', null);
  app.addHook('onRequest', async (request) => {
    if (!requestNeedsCredentials(request.url, request.routeOptions.url, request.routeOptions.config as { public?: boolean } | undefined)) return;
    const principal = await authenticateControl(app, request, options);
    // Set before the checks below, so that a refused change is still known by its caller (audit-trail.ts).
    request.controlPrincipal = principal;
    if (principal.kind === 'user') {
      assertSameOriginChange(request);
      if (principal.role !== 'admin' && !viewerMayCall(request)) {
        throw new RelayError('RELAY_ERR_FORBIDDEN', `user ${principal.username} has the viewer role: it reads the catalog, logs and usage and changes nothing`);
      }
    }
  });
}
