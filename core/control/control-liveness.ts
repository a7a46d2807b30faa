// GET /livez on the control port too (public, a status only): the inference port closes new
// connections past server.maxConnections, and a liveness probe there would then restart a pod
// that is alive and serving, which turns a flood of idle connections into restarts of every pod.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

export function registerControlLiveness(app: FastifyInstance): void {
  app.get('/livez', {
    config: { public: true },
    schema: { summary: 'Liveness: the process serves (public)', operationId: 'livez', tags: ['ops'], security: [], response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }));
}
