// Which control routes need credentials, decided in one place: every route under /api/,
// /metrics and /config.json, unless its config says `public: true` (GET /api/version, POST
// /api/auth/login). Routes outside those paths (the dashboard's assets) are the admin UI's and
// public by design. The same rule writes each route's OpenAPI `security` requirement.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorResponse } from './schemas.ts';

export const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'RELAY_ADMIN_TOKEN, the break-glass credential.' },
  cookieAuth: { type: 'apiKey', in: 'cookie', name: 'relay_session', description: 'Session cookie set by POST /api/auth/login.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'RELAY_METRICS_TOKEN: reads GET /metrics and nothing else (for Prometheus).' },
} as const;

/** Either credential is enough. */
export const CONTROL_SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }];

/** GET /metrics also takes the scrape-only token. */
const METRICS_SECURITY: Array<Record<string, string[]>> = [...CONTROL_SECURITY, { metricsToken: [] }];

export function isGuardedPath(url: string): boolean {
  const path = url.split('?')[0];
  return path === '/api' || path.startsWith('/api/') || path === '/metrics' || path === '/config.json';
}

export function needsCredentials(url: string, config: { public?: boolean } | undefined): boolean {
  return config?.public !== true && isGuardedPath(url);
}

function decodedPath(url: string): string {
  const path = url.split('?')[0];
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * For a request: guarded when the matched route's pattern is, or the path is (an unknown
 * /api/* path, or one the dashboard's catch-all matched). The path is judged decoded, so
 * /%61pi/... cannot slip past a check the router would not make.
 */
export function requestNeedsCredentials(url: string, routePattern: string | undefined, config: { public?: boolean } | undefined): boolean {
  if (config?.public === true) return false;
  return isGuardedPath(routePattern ?? '') || isGuardedPath(url) || isGuardedPath(decodedPath(url));
}

/** Adds `security` (and a documented 401) to every guarded route as it is declared. */
export function installRouteSecurityDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    if (schema.hide === true) return;
    if (needsCredentials(route.url, route.config as { public?: boolean } | undefined)) {
      const response = (schema.response ?? {}) as Record<string, unknown>;
      route.schema = {
        ...schema,
        security: route.url === '/metrics' ? METRICS_SECURITY : CONTROL_SECURITY,
        response: response['401'] || response['4xx'] ? response : { ...response, 401: ErrorResponse },
      };
    } else if (isGuardedPath(route.url)) {
      route.schema = { ...schema, security: [] };
    }
  });
}
