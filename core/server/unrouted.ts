// The answer to a request no route serves: a 405 naming the allowed methods when the path is a
// route's under another method (a GET on a POST endpoint), a 404 that names the path a client most
// likely meant when another wire serves it under a prefix (an OpenAI SDK pointed at /v1), else a
// plain 404.
import type { FastifyInstance } from 'fastify';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';

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
    return new RelayError('RELAY_ERR_METHOD_NOT_ALLOWED', `${method} is not served at ${echoedName(path)}; use ${allowed.join(' or ')}`, { headers: { allow: allowed.join(', ') } });
  }
  const meant = meantPath(table, method, path);
  const hint = meant ? `; did you mean ${meant}?` : '';
  return new RelayError('RELAY_ERR_NOT_FOUND', `no route for ${echoedName(method)} ${echoedName(path)}${hint}`);
}

/** The served path a client's base URL most likely missed, or undefined. */
function meantPath(table: KnownRoute[], method: string, path: string): string | undefined {
  const served = (candidate: string) => table.some((r) => r.method === method && r.url === candidate);
  // A base URL ending in /v1 given to a client that appends /v1 itself (/vendor-b/v1/v1/messages).
  const collapsed = path.replace(/\/v1\/v1\//, '/v1/');
  if (collapsed !== path && served(collapsed)) return collapsed;
  // A base URL without the /v1 that a client does not add (/vendor-a/chat/completions).
  const prefixed = /^(\/[^/]+)(\/(?!v1\/).+)$/.exec(path);
  if (prefixed && served(`${prefixed[1]}/v1${prefixed[2]}`)) return `${prefixed[1]}/v1${prefixed[2]}`;
  // Another wire's path under its prefix (an OpenAI SDK pointed at /v1).
  if (path.length <= 1) return undefined;
  return table.find((r) => r.method === method && r.url !== path && r.url.endsWith(path) && !r.url.includes(':'))?.url;
}
