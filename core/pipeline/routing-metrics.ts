// Counters of routing decisions (issue 42 item 6): model fallbacks and same-binding retries, by
// the model (its catalog slug) and the reason (a fixed set): cardinality stays bounded.
import { Counter, type Registry } from 'prom-client';

export interface RoutingMetrics {
  /** The request moved on from `model` to a later fallback (or skipped it) for `reason`. */
  fallback(model: string, reason: string): void;
  /** A binding of `model` was tried again for `reason` under a retry policy. */
  retry(model: string, reason: string): void;
}

export function createRoutingMetrics(registry: Registry): RoutingMetrics {
  const fallbacks = new Counter({ name: 'relay_model_fallbacks_total', help: 'Requests that moved on from a model to its next fallback, by model and reason', labelNames: ['model', 'reason'], registers: [registry] });
  const retries = new Counter({ name: 'relay_upstream_retries_total', help: 'Tries of the same binding again under a retry policy, by model and reason', labelNames: ['model', 'reason'], registers: [registry] });
  return {
    fallback: (model, reason) => fallbacks.inc({ model, reason }),
    retry: (model, reason) => retries.inc({ model, reason }),
  };
}
