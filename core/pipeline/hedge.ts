// Hedged first bytes (issue 42 item 5, off unless a model sets spec.hedge): when a binding's
// response headers have not come after its recent p95 time to first byte (binding-meter.ts; the
// model's `afterMs` until the binding has P95_MIN_SAMPLES observations), the same request goes to
// the next binding too (same adapter, so the same request shape); whichever answers first is kept
// and the other is cancelled upstream. A failure of one waits for the other.
import type { Route, UpstreamRequest, UpstreamResponse } from '../hooks.ts';
import { bindingKey, type BindingMeter } from './binding-meter.ts';
import type { CredentialResolver } from './credentials.ts';
import type { KeyHealth } from './key-health.ts';

/** The shortest hedge delay from a p95 (spec.hedge.afterMs's own minimum): a hedge is never immediate. */
export const MIN_HEDGE_DELAY_MS = 10;

export interface HedgePlan {
  route: Route;
  credential: string | null;
  /** How long the first binding is given before the hedge is sent. */
  afterMs: number;
  /** Where afterMs came from: the binding's recent p95, or the model's spec.hedge.afterMs. */
  from: 'p95' | 'afterMs';
}

interface Outcome {
  route: Route;
  res?: UpstreamResponse;
  err?: unknown;
  controller: AbortController;
  /** When the request was sent and when its headers came (performance.now()). */
  sentAt: number;
  answeredAt: number;
}

export interface HedgeResult {
  /** The route whose answer is kept. */
  route: Route;
  res: UpstreamResponse;
  /** Set when the hedge was sent: the route cancelled. */
  cancelled: Route | null;
  /** The kept answer's time to its headers, from its own request. */
  ttfbMs: number;
}

/**
 * The hedge for trying `routes[i]`, when its model asks for one: the next route of the same adapter
 * and shapes (so the same request body fits), whose key is available and opens here; else null.
 */
export function planHedge(routes: Route[], i: number, credentials: CredentialResolver, health: KeyHealth, meter: BindingMeter | null): HedgePlan | null {
  const route = routes[i]!;
  const configured = route.model.spec.hedge?.afterMs;
  if (configured === undefined || !route.hostKey) return null;
  for (let j = i + 1; j < routes.length; j++) {
    const next = routes[j]!;
    if (next.adapter !== route.adapter || next.shapes.join() !== route.shapes.join() || !next.hostKey || next.host === route.host || !health.isAvailable(next.hostKey)) continue;
    const credential = credentials.resolve(next.hostKey);
    if ('error' in credential) continue;
    const p95 = meter?.p95Of(bindingKey(route)) ?? null;
    return p95 === null
      ? { route: next, credential: credential.value, afterMs: configured, from: 'afterMs' }
      : { route: next, credential: credential.value, afterMs: Math.max(MIN_HEDGE_DELAY_MS, Math.round(p95)), from: 'p95' };
  }
  return null;
}

function launch(route: Route, req: UpstreamRequest): Outcome & { done: Promise<Outcome> } {
  const controller = new AbortController();
  const outcome: Outcome = { route, controller, sentAt: performance.now(), answeredAt: 0 };
  const done = route.adapter.send({ ...req, signal: AbortSignal.any([req.signal, controller.signal]) })
    .then((res) => Object.assign(outcome, { res, answeredAt: performance.now() }), (err: unknown) => Object.assign(outcome, { err }));
  return Object.assign(outcome, { done });
}

/** Drops an answer that lost the race (its connection is closed, so the upstream stops). */
function cancel(outcome: Outcome): void {
  outcome.controller.abort(new Error('hedge lost'));
  outcome.res?.body.destroy();
}

/**
 * Sends `req` on `route`, and after `plan.afterMs` without headers `build(plan)` on the plan's
 * route too. Throws the primary's error when both fail (or when the primary fails before the hedge).
 */
export async function sendHedged(route: Route, req: UpstreamRequest, plan: HedgePlan, build: (plan: HedgePlan) => UpstreamRequest, onHedge: () => void): Promise<HedgeResult> {
  const primary = launch(route, req);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), plan.afterMs); });
  const early = await Promise.race([primary.done, waited]);
  clearTimeout(timer);
  if (early) {
    if (early.err !== undefined) throw early.err;
    return { route, res: early.res!, cancelled: null, ttfbMs: early.answeredAt - early.sentAt };
  }
  onHedge();
  const hedge = launch(plan.route, build(plan));
  const first = await Promise.race([primary.done, hedge.done]);
  const other = first === primary ? hedge : primary;
  const winner = first.err === undefined ? first : await other.done;
  if (winner.err !== undefined) {
    cancel(hedge);
    throw primary.err ?? hedge.err;
  }
  const loser = winner === primary ? hedge : primary;
  cancel(loser);
  // A loser that answers later still has its body dropped.
  void loser.done.then((o) => o.res?.body.destroy());
  return { route: winner.route, res: winner.res!, cancelled: loser.route, ttfbMs: winner.answeredAt - winner.sentAt };
}
