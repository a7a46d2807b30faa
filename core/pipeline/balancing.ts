// The order a model's bindings are tried in, by its spec.balancing (issue 42 item 4): weighted
// random (the default), fewest requests in flight, or lowest recent time to first byte. Weights
// stay a prior (a score is divided by the binding's share of the top weight); health, cooldowns
// and circuits still decide which keys may be tried at all (resolve.ts).
import type { ModelSpec } from '../catalog/kinds.ts';
import type { BindingMeter } from './binding-meter.ts';

export type BalancingStrategy = NonNullable<ModelSpec['balancing']>;

/** Whether requests to a model with this strategy are measured (weighted needs no measurement). */
export function isMeasured(strategy: BalancingStrategy | undefined): boolean {
  return strategy === 'least-in-flight' || strategy === 'lowest-latency';
}

/**
 * `weighted` (already in weighted random order) reordered by the strategy's score, lowest first;
 * ties keep the weighted order. A binding without a recent latency goes first, so it is measured.
 */
export function orderByStrategy<T>(
  strategy: BalancingStrategy | undefined, weighted: T[], meter: BindingMeter | undefined,
  keyOf: (item: T) => string, weightOf: (item: T) => number,
): T[] {
  if (!meter || !isMeasured(strategy) || weighted.length < 2) return weighted;
  let top = 0;
  for (const item of weighted) top = Math.max(top, weightOf(item));
  const now = Date.now();
  const scored = weighted.map((item, i) => {
    const share = Math.max(weightOf(item), 1e-6) / Math.max(top, 1e-6);
    const key = keyOf(item);
    let score: number;
    if (strategy === 'least-in-flight') {
      score = (meter.inFlightOf(key) + 1) / share;
    } else {
      const latency = meter.latencyOf(key, now);
      score = latency === null ? -1 : latency / share;
    }
    return { item, i, score };
  });
  scored.sort((a, b) => a.score - b.score || a.i - b.i);
  return scored.map((s) => s.item);
}
