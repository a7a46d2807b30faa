// GET /api/health (credentials required): what the public probes leave out. Where the catalog
// in use came from (the database, or the local snapshot during an outage at start), its age,
// and whether the database answers now, with the reason when it does not.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogSync } from '../catalog/sync.ts';
import type { Database } from '../db/types.ts';
import { errorResponses } from './schemas.ts';

const HealthDetail = Type.Object({
  database: Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
    reason: Type.Optional(Type.String()),
  }),
  catalog: Type.Object({
    source: Type.Union([Type.Literal('none'), Type.Literal('database'), Type.Literal('local-snapshot')]),
    version: Type.Integer(),
    ageMs: Type.Integer(),
    entities: Type.Integer(),
  }),
});

export function registerHealthDetailRoute(app: FastifyInstance, deps: { db: Database; sync: CatalogSync }): void {
  app.get('/api/health', {
    schema: { summary: 'Database and catalog state (the public probes do not say)', operationId: 'health', tags: ['ops'], response: { 200: HealthDetail, ...errorResponses } },
  }, async () => {
    const snap = deps.sync.snapshot();
    const catalog = {
      source: deps.sync.source, version: snap.version, ageMs: Date.now() - snap.builtAt,
      entities: Object.values(snap.counts()).reduce((a, b) => a + b, 0),
    };
    try {
      await deps.db.ping(1_500);
      return { database: { status: 'ok' as const }, catalog };
    } catch (err) {
      return { database: { status: 'unreachable' as const, reason: (err as Error).message }, catalog };
    }
  });
}
