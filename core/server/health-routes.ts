// Public probes on the inference port. They reveal nothing about the infrastructure (no
// database address, no error text): the details are GET /api/health on the control port.
//   /livez   the process serves HTTP: 200 while it can answer at all (a liveness probe).
//   /readyz  the catalog is loaded, from the database or the local snapshot: a database outage
//            is not a reason to refuse traffic while a snapshot serves (a readiness probe).
//   /healthz an alias of /readyz, so probes written for it keep working.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CatalogSync } from '../catalog/sync.ts';

const LiveBody = Type.Object({ status: Type.Literal('ok') });
const ReadyBody = Type.Object({ status: Type.Union([Type.Literal('ready'), Type.Literal('not-ready')]) });

export function registerHealthRoutes(app: FastifyInstance, deps: { sync: CatalogSync }): void {
  app.get('/livez', {
    schema: { summary: 'Liveness: the process serves', tags: ['health'], response: { 200: LiveBody } },
  }, async () => ({ status: 'ok' as const }));

  const ready = async (_request: unknown, reply: { code(n: number): unknown }) => {
    if (deps.sync.source === 'none') {
      reply.code(503);
      return { status: 'not-ready' as const };
    }
    return { status: 'ready' as const };
  };
  const readySchema = { tags: ['health'], response: { 200: ReadyBody, 503: ReadyBody } };
  app.get('/readyz', { schema: { summary: 'Readiness: the catalog is loaded (a database outage does not count)', ...readySchema } }, ready);
  app.get('/healthz', { schema: { summary: 'Alias of /readyz', ...readySchema } }, ready);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
