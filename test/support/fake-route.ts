// A Route with only what the translation layer reads (upstreamModel, the host's options; identity for per-route memory).
import type { Route } from '../../core/plugin-api.ts';

export function fakeRoute(upstreamModel = 'upstream-model'): Route {
  return { upstreamModel, host: { spec: {} } } as unknown as Route;
}
