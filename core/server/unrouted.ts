// The answer to a request no route serves: a 405 naming the allowed methods when the path is a
// route's under another method (a GET on a POST endpoint), a 404 that names the path a client most
// likely meant when another wire serves it under a prefix (an OpenAI SDK pointed at /v1), else a
// plain 404.
import type { FastifyInstance } from 'fastify';
import { RelayError } from '../errors.ts';

interface KnownRoute {
  method: string;
  url: string;
}

const routeTables = new WeakMap<FastifyInstance, KnownRoute[]>();

/** Starts recording `app`'s routes (call before any is added). */
export function recordRoutes(app: FastifyInstance): void {
  const table: KnownRoute[] = [];
  routeTables.set(app, table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) table.push({ method, url: route.url });
  });
}

export function unroutedError(app: FastifyInstance, method: string, rawUrl: string): RelayError {
  const path = rawUrl.split('?')[0]!;
  const table = routeTables.get(app) ?? [];
  const allowed = [...new Set(table.filter((r) => r.url === path && r.method !== 'HEAD').map((r) => r.method))];
  if (allowed.length > 0 && !allowed.includes(method)) {
    return new RelayError('RELAY_ERR_METHOD_NOT_ALLOWED', `${method} is not served at ${path}; use ${allowed.join(' or ')}`, { headers: { allow: allowed.join(', ') } });
  }
  const meant = path.length > 1 ? table.find((r) => r.method === method && r.url !== path && r.url.endsWith(path) && !r.url.includes(':')) : undefined;
  const hint = meant ? `; did you mean ${meant.url}?` : '';
  return new RelayError('RELAY_ERR_NOT_FOUND', `no route for ${method} ${path}${hint}`);
}
