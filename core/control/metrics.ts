// GET /metrics: the process's prom-client registry in Prometheus text. The control plane adds
// its own request counters and latency, catalog size per kind and the snapshot's age; the
// inference listener's request metrics are the pipeline's.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import type { CatalogSync } from '../catalog/sync.ts';
import { errorResponses } from './schemas.ts';

function getOrCreate<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export function installControlMetrics(app: FastifyInstance, registry: Registry, sync: CatalogSync): void {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = getOrCreate(registry, 'relay_control_requests_total', () => new Counter({
    name: 'relay_control_requests_total', help: 'Control-plane requests by method, route pattern and status', labelNames, registers: [registry],
  }));
  const latency = getOrCreate(registry, 'relay_control_request_duration_seconds', () => new Histogram({
    name: 'relay_control_request_duration_seconds', help: 'Control-plane request latency', labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
  }));
  getOrCreate(registry, 'relay_catalog_entities', () => new Gauge({
    name: 'relay_catalog_entities', help: "Entities of each kind in this instance's catalog snapshot", labelNames: ['kind'], registers: [registry],
    collect() {
      for (const [kind, count] of Object.entries(sync.snapshot().counts())) this.set({ kind }, count);
    },
  }));
  getOrCreate(registry, 'relay_catalog_snapshot_age_seconds', () => new Gauge({
    name: 'relay_catalog_snapshot_age_seconds', help: 'Seconds since the catalog snapshot in use was built', registers: [registry],
    collect() {
      this.set((Date.now() - sync.snapshot().builtAt) / 1000);
    },
  }));
  getOrCreate(registry, 'relay_catalog_from_local_snapshot', () => new Gauge({
    name: 'relay_catalog_from_local_snapshot', help: '1 while this instance serves the catalog saved in its data directory because Postgres was unreachable at start',
    registers: [registry],
    collect() {
      this.set(sync.source === 'local-snapshot' ? 1 : 0);
    },
  }));
  getOrCreate(registry, 'relay_catalog_snapshot_version', () => new Gauge({
    name: 'relay_catalog_snapshot_version', help: "This instance's snapshot build counter", registers: [registry],
    collect() {
      this.set(sync.snapshot().version);
    },
  }));

  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL, keeps the label set bounded; unknown routes share one label.
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', {
    schema: {
      summary: 'Prometheus metrics (admin token or session)', operationId: 'metrics', tags: ['ops'],
      response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses },
    },
  }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}
