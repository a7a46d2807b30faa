// Proxy mode: the caller's own vendor credential goes only to the hosts of the model it named. A
// fallback model bound elsewhere (another vendor, or a third party on the same wire) never gets it.
import type { ModelResolver, Principal, Route, ShapeId } from '../hooks.ts';

/** The hosts (ids) a model's proxy-mode routes go to; none when it cannot be resolved. */
export function proxyHostsOf(resolve: ModelResolver, principal: Principal, model: string, shape: ShapeId): Set<string> {
  try {
    return new Set(resolve(principal, model, { shape }).map((route) => route.host.metadata.id));
  } catch {
    return new Set();
  }
}

/** Whether any of a fallback's proxy-mode routes goes to a host the caller's credential may reach. */
export function reachesAny(resolve: ModelResolver, principal: Principal, model: string, shape: ShapeId, hosts: ReadonlySet<string>): boolean {
  for (const host of proxyHostsOf(resolve, principal, model, shape)) if (hosts.has(host)) return true;
  return false;
}

/** The routes on the caller's credential's hosts. */
export function withinHosts(routes: Route[], hosts: ReadonlySet<string>): Route[] {
  return routes.filter((route) => hosts.has(route.host.metadata.id));
}
