// GET /healthz (public, inference port): 200 while Postgres answers, 503 with a reason when not.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Database } from '../db/types.ts';
import type { CatalogSync } from '../catalog/sync.ts';

const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  database: Type.String(),
  reason: Type.Optional(Type.String()),
  snapshot: Type.Object({ version: Type.Integer(), ageMs: Type.Integer() }),
});

export function registerHealthRoutes(app: FastifyInstance, deps: { db: Database; sync: CatalogSync }): void {
  app.get('/healthz', {
    schema: { summary: 'Liveness: pings the database', tags: ['health'], response: { 200: HealthBody, 503: HealthBody } },
  }, async (_request, reply) => {
    const snap = deps.sync.snapshot();
    const snapshot = { version: snap.version, ageMs: Date.now() - snap.builtAt };
    try {
      await deps.db.ping(1_500);
      return { status: 'ok' as const, database: 'ok', snapshot };
    } catch (err) {
      return reply.code(503).send({ status: 'unavailable', database: 'unreachable', reason: `database: ${(err as Error).message}`, snapshot });
    }
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
