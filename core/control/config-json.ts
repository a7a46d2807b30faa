// GET /config.json: what the dashboard shows about this instance once someone has signed in:
// names and kinds of plugins (a plugin loaded from a file shows as "local", not its path), feature
// switches, base paths, the loaded backend ids and vendor adapter ids. Not public (the spec's public endpoints are
// /healthz and /api/version): which backends and switches an instance has is not for anyone who
// can reach the port; the dashboard reads it again after sign-in.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Sealer } from '../crypto/sealing.ts';
import type { Observer } from '../observer/observer.ts';
import type { LoadedPlugin } from '../plugins/loader.ts';
import type { Settings } from '../settings/types.ts';

export const DashboardConfig = Type.Object({
  version: Type.String(),
  plugins: Type.Array(Type.Object({
    name: Type.String(),
    kind: Type.String(),
    source: Type.String({ description: '"builtin", a package name, or "local" for a plugin loaded from a path.' }),
  })),
  features: Type.Object({
    payloadLogging: Type.Boolean({ description: 'Whether payload capture is switched on globally.' }),
    masterKey: Type.Boolean({ description: 'Whether RELAY_MASTER_KEY is set (host-key values can be stored).' }),
  }),
  basePaths: Type.Object({ control: Type.String() }),
  backends: Type.Object({ usage: Type.Array(Type.String()), payload: Type.Array(Type.String()) }),
  adapters: Type.Array(Type.String(), { description: 'Ids of the vendor adapters loaded on this instance (a provider names one).' }),
});

function publicSource(source: string): string {
  if (source === 'builtin') return source;
  return source.startsWith('/') || /^[A-Za-z]:[\\/]/.test(source) ? 'local' : source;
}

export function registerConfigJson(app: FastifyInstance, deps: {
  version: string; plugins: () => LoadedPlugin[]; settings: Settings; sealer: Sealer; observer: Pick<Observer, 'backends'>;
  hooks: { adapters: ReadonlyMap<string, unknown> };
}): void {
  app.get('/config.json', {
    schema: { summary: "The dashboard's configuration: plugins, feature switches, backends (nothing secret)", operationId: 'dashboard-config', tags: ['ops'], response: { 200: DashboardConfig } },
  }, async () => ({
    version: deps.version,
    plugins: deps.plugins().map((p) => ({ name: p.plugin.name, kind: p.plugin.kind, source: publicSource(p.source) })),
    features: { payloadLogging: deps.settings.get('payload-logging').enabled, masterKey: deps.sealer.enabled },
    basePaths: { control: '/api' },
    backends: deps.observer.backends(),
    adapters: [...deps.hooks.adapters.keys()].sort(),
  }));
}
