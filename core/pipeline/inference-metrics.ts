// Per-request Prometheus metrics that answer an on-call's questions (issue 43 item 2). Labels are
// catalog slugs, registered shapes and fixed sets, never request input: cardinality stays bounded.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ShapeId, UsageEvent } from '../hooks.ts';
import type { RequestRecord } from './request-record.ts';
import type { FallbackCondition } from '../catalog/kinds.ts';
import { FALLBACK_CONDITIONS } from './fallbacks.ts';
import { COUNTING_SHAPES } from '../canonical/counting-shapes.ts';

const SECONDS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Refusals an operator alerts on: Relay's own rate limits, every host key cooling after the upstream's, a budget spent or unable to count the request. */
const REFUSAL_CODES = new Set(['RELAY_ERR_RATE_LIMITED', 'RELAY_ERR_UPSTREAM_RATE_LIMITED', 'RELAY_ERR_BUDGET_EXCEEDED', 'RELAY_ERR_BUDGET_UNPRICED', 'RELAY_ERR_BUDGET_UNAVAILABLE']);
const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;

/** Why a candidate was passed over for the next: a FailureKind, or one of the pipeline's own. */
export type FailoverReason = 'rate_limit' | 'server' | 'timeout' | 'connect' | 'auth' | 'stream_error' | 'host_key_unusable' | 'circuit_open' | 'other';

export interface InferenceMetrics {
  /** One finished (or refused) request, from its record and usage event. */
  observe(record: RequestRecord, event: UsageEvent, shape: ShapeId): void;
  failover(reason: FailoverReason): void;
  /** The request moved on to a fallback model, for this condition (fallbacks.ts). */
  fallback(reason: FallbackCondition): void;
}

/** Why an answer the client got has no usage from its upstream: unmetered, or metered by Relay's estimate. */
type UnreportedReason = 'client_cut' | 'upstream_error' | 'not_reported' | 'unreadable';

function whyUnreported(record: RequestRecord, event: UsageEvent): UnreportedReason {
  if (event.extras.usage_unreadable !== undefined) return 'unreadable';
  if (record.clientAborted) return 'client_cut';
  return event.error_code !== null ? 'upstream_error' : 'not_reported';
}

/** The reason a finished request's answer is unmetered, or null when it is metered (or was no answer). */
function unmeteredReason(record: RequestRecord, event: UsageEvent, shape: ShapeId): UnreportedReason | null {
  // A count answers with a count, not a bill.
  if (record.usage !== null || record.route === null || event.status < 200 || event.status >= 300 || COUNTING_SHAPES.includes(shape)) return null;
  return whyUnreported(record, event);
}

function statusClass(status: number): string {
  return status >= 100 && status <= 599 ? `${Math.floor(status / 100)}xx` : 'other';
}

export function createInferenceMetrics(registry: Registry): InferenceMetrics {
  const labels = ['model', 'host', 'shape', 'status_class'] as const;
  const requests = new Counter({ name: 'relay_requests_total', help: 'Inference requests by model, host, inbound shape and status class', labelNames: labels, registers: [registry] });
  const errors = new Counter({ name: 'relay_request_errors_total', help: 'Inference requests that failed (status >= 400, or cut mid-response) by model, host, inbound shape and status class', labelNames: labels, registers: [registry] });
  const tokens = new Counter({ name: 'relay_tokens_total', help: 'Tokens by model and kind (input, output, cache_read, cache_write, reasoning)', labelNames: ['model', 'kind'], registers: [registry] });
  const cost = new Counter({ name: 'relay_cost_total', help: "Cost in the pricing's currency by model and policy", labelNames: ['model', 'policy', 'currency'], registers: [registry] });
  const ttfb = new Histogram({ name: 'relay_time_to_first_byte_seconds', help: 'Time to the first byte sent to the client, by model and host', labelNames: ['model', 'host'], buckets: SECONDS, registers: [registry] });
  const duration = new Histogram({ name: 'relay_request_duration_seconds', help: 'Inference request duration (to the last byte), by model and host', labelNames: ['model', 'host'], buckets: SECONDS, registers: [registry] });
  const failovers = new Counter({ name: 'relay_failovers_total', help: 'Candidates passed over for the next one before the first byte, by reason', labelNames: ['reason'], registers: [registry] });
  const refusals = new Counter({ name: 'relay_refusals_total', help: 'Requests refused by a rate limit or a spent budget, by error code', labelNames: ['code'], registers: [registry] });
  const unmetered = new Counter({ name: 'relay_unmetered_answers_total', help: 'Answers the client got with no usage on record (neither billed nor counted against a budget), by model and reason', labelNames: ['model', 'reason'], registers: [registry] });
  const estimated = new Counter({ name: 'relay_estimated_answers_total', help: 'Answers without usage from their upstream whose tokens Relay estimated (extras.usage_estimated), by model and reason', labelNames: ['model', 'reason'], registers: [registry] });
  const fallbacks = new Counter({ name: 'relay_fallbacks_total', help: 'Requests that moved on to a fallback model, by the condition that sent them', labelNames: ['reason'], registers: [registry] });
  // Present from the first scrape, so alert rules and dashboards see zeros rather than no series.
  for (const code of REFUSAL_CODES) refusals.inc({ code }, 0);
  for (const reason of FALLBACK_CONDITIONS) fallbacks.inc({ reason }, 0);

  return {
    observe(record, event, shape) {
      // model_slug is the catalog's (null when the asked name is not a catalog model): never the raw request.
      const model = event.model_slug ?? '';
      const host = record.route?.host.metadata.slug ?? '';
      const cls = statusClass(event.status);
      requests.inc({ model, host, shape, status_class: cls });
      if (event.status >= 400 || event.error_code !== null) errors.inc({ model, host, shape, status_class: cls });
      if (event.error_code !== null && REFUSAL_CODES.has(event.error_code)) refusals.inc({ code: event.error_code });
      for (const kind of TOKEN_KINDS) {
        const n = event[`${kind}_tokens`];
        if (n > 0) tokens.inc({ model, kind }, n);
      }
      if (event.cost !== null && event.cost > 0) {
        cost.inc({ model, policy: record.principal?.policy.metadata.slug ?? '', currency: event.currency ?? '' }, event.cost);
      }
      const reason = unmeteredReason(record, event, shape);
      if (reason !== null) unmetered.inc({ model, reason });
      if (event.extras.usage_estimated !== undefined) estimated.inc({ model, reason: whyUnreported(record, event) });
      if (event.ttfb_ms !== null) ttfb.observe({ model, host }, event.ttfb_ms / 1000);
      duration.observe({ model, host }, event.latency_ms / 1000);
    },
    failover(reason) {
      failovers.inc({ reason });
    },
    fallback(reason) {
      fallbacks.inc({ reason });
    },
  };
}
