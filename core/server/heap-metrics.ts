// relay_heap_used_after_major_gc_bytes: the JS heap in use right after the last full (mark-compact)
// collection. Under load RSS and the current heap saw between collections by 100 MB and more;
// what survives a full collection is the live set, and its growth is what a leak looks like.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Gauge, type Registry } from 'prom-client';

export function registerHeapMetrics(registry: Registry): () => void {
  const gauge = new Gauge({
    name: 'relay_heap_used_after_major_gc_bytes',
    help: 'JS heap in use just after the last full garbage collection (the live set); 0 before the first one',
    registers: [registry],
  });
  gauge.set(0);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gauge.set(v8.getHeapStatistics().used_heap_size);
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
