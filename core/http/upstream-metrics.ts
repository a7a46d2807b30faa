// Upstream connection gauges per origin, read from undici's pool stats at scrape time (nothing on
// the hot path). Origins come from the catalog's hosts, so the label set is bounded by the catalog.
import { Gauge, type Registry } from 'prom-client';
import type { UpstreamClient } from './upstream-client.ts';

export function registerUpstreamMetrics(registry: Registry, upstream: UpstreamClient): void {
  new Gauge({
    name: 'relay_upstream_connections_in_use', help: 'Upstream connections carrying a request, per origin', labelNames: ['origin'], registers: [registry],
    collect() {
      this.reset();
      for (const [origin, s] of upstream.connectionStats()) this.set({ origin }, s.inUse);
    },
  });
  new Gauge({
    name: 'relay_upstream_requests_queued', help: 'Upstream requests waiting for a connection, per origin', labelNames: ['origin'], registers: [registry],
    collect() {
      this.reset();
      for (const [origin, s] of upstream.connectionStats()) this.set({ origin }, s.queued);
    },
  });
}
