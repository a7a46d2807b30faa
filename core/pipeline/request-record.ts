// What one request did, gathered as it runs and turned into its usage event at the end.
import { boundedUsage } from '../canonical/token-count.ts';
import type { Usage } from '../canonical/types.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { RelayKey } from '../catalog/kinds.ts';
import type { Principal, Route, ShapeId, UsageEvent } from '../hooks.ts';
import { costOf } from '../observer/cost.ts';
import { baseModelName } from '../pricing/model-names.ts';
import { priceFor, tableEntryFor, type Price } from '../pricing/price-lookup.ts';
import { modifiedPrice, type ModifiedPrice } from '../pricing/price-modifiers.ts';
import type { FailoverReason } from './inference-metrics.ts';
import { echoedName } from '../echoed-name.ts';

/** Whether two names are one model: the same name, one table entry, or one base name (a dated snapshot). */
function sameModel(a: string, b: string): boolean {
  if (a === b) return true;
  const entry = tableEntryFor(a);
  return entry !== null ? entry === tableEntryFor(b) : baseModelName(a) === baseModelName(b);
}

/**
 * The event's extras: the price's source beside the cost (so a figure can be traced to its rates),
 * the model that answered when it is not the one asked of the upstream, why an answer is not billed,
 * the searches the upstream billed and the conditions it priced the answer under, each with a note
 * when the price has no figure for it.
 */
function usageExtras(extras: Record<string, string>, usage: Usage | null, price: Price | null, modified: ModifiedPrice, upstreamModel: string | null): Record<string, string> {
  const searches = usage?.web_search_requests ?? 0;
  const answeredBy = usage?.model !== undefined && upstreamModel !== null && !sameModel(usage.model, upstreamModel) ? usage.model : null;
  if (!(price && usage) && searches === 0 && modified.applied.length === 0 && answeredBy === null && usage?.unbilled === undefined) return extras;
  const out: Record<string, string> = { ...extras };
  if (price && usage) out.price_source = price.source;
  if (answeredBy !== null) out.answered_by = answeredBy;
  if (usage?.unbilled !== undefined) out.unbilled = usage.unbilled;
  if (searches > 0) {
    out.web_search_requests = String(searches);
    if (price?.rates.webSearchPerThousand === undefined) out.web_search_unpriced = 'true';
  }
  if (modified.applied.length > 0) {
    out.price_modifiers = modified.applied.join(',');
    if (price && modified.unpriced.length > 0) out.price_modifiers_unpriced = modified.unpriced.join(',');
  }
  return out;
}

export class RequestRecord {
  /** Epoch milliseconds; written as ISO text in toEvent. */
  readonly startedAt: number;
  private readonly t0: number;
  principal: Principal | null = null;
  /** A relay key Relay knows but refused (disabled, expired): the event still names it and its policy. */
  refusedKey: RelayKey | null = null;
  route: Route | null = null;
  upstreamShape: ShapeId | null = null;
  status = 0;
  errorCode: string | null = null;
  ttfbMs: number | null = null;
  attempts = 0;
  clientAborted = false;
  private answerUsage: Usage | null = null;
  client: string | null = null;
  extras: Record<string, string> = {};
  clientRequestId: string | null = null;
  /** The last attempted upstream's own id for its answer. */
  upstreamRequestId: string | null = null;
  /** Why the latest attempt failed, for the failover counter. */
  lastFailure: FailoverReason | null = null;
  private ended: { at: number; t: number } | null = null;
  /**
   * The characters of output Relay saw of the answer (text, tool-call arguments, reasoning), worked
   * out only when the answer's usage must be estimated (unreported-usage.ts): nothing on the hot path.
   */
  generatedChars: (() => number) | null = null;

  /** `elapsedMs`: how long ago the request began, for a record made after the fact. */
  /** The model the caller named, as echoedName bounds it: a 1 MB `model` must not become a 1 MB usage record. */
  readonly modelRequested: string | null;

  constructor(readonly requestId: string, readonly inboundShape: ShapeId, modelRequested: string | null, readonly stream: boolean, elapsedMs = 0) {
    this.modelRequested = modelRequested === null ? null : echoedName(modelRequested);
    this.startedAt = Date.now() - elapsedMs;
    this.t0 = performance.now() - elapsedMs;
  }

  /** What the answer used, as the adapter or a count read it. */
  get usage(): Usage | null {
    return this.answerUsage;
  }

  // Bounded here, where every path records it (translated, passthrough, a counted prompt, a plugin's
  // own reader): an absurd count would otherwise fit no log column and hold a token rate limit shut.
  set usage(usage: Usage | null) {
    this.answerUsage = usage === null ? null : boundedUsage(usage);
  }

  markFirstByte(): void {
    if (this.ttfbMs === null) this.ttfbMs = performance.now() - this.t0;
  }

  /** The request is over: what happens after (counting a cut answer's prompt) is not its latency. */
  markEnd(): void {
    this.ended ??= { at: Date.now(), t: performance.now() };
  }

  toEvent(snapshot: CatalogSnapshot): UsageEvent {
    const usage = this.usage;
    const route = this.route;
    const price = route ? priceFor(snapshot, route.model.metadata.id, route.host.metadata.id, route.upstreamModel, usage?.model ?? null) : null;
    const modified = modifiedPrice(usage?.price_modifiers, price?.modifiers ?? null);
    // A request refused before a route was chosen (no healthy key, a relay-side rate limit) still
    // names the model it asked for, when the catalog has it: per-model views count its failures.
    const model = route?.model ?? (this.modelRequested === null ? undefined : snapshot.modelBySlug(this.modelRequested));
    return {
      request_id: this.requestId,
      started_at: new Date(this.startedAt).toISOString(),
      finished_at: new Date(this.ended?.at ?? Date.now()).toISOString(),
      relay_key_id: (this.principal?.relayKey ?? this.refusedKey)?.metadata.id ?? null,
      relay_key_prefix: (this.principal?.relayKey ?? this.refusedKey)?.spec.prefix ?? null,
      policy_id: this.principal?.policy.metadata.id ?? this.refusedKey?.spec.policyId ?? null,
      model_requested: this.modelRequested,
      model_id: model?.metadata.id ?? null,
      model_slug: model?.metadata.slug ?? null,
      host_id: route?.host.metadata.id ?? null,
      host_key_id: route?.hostKey?.metadata.id ?? null,
      provider_id: route?.provider.metadata.id ?? null,
      upstream_model: route?.upstreamModel ?? null,
      inbound_shape: this.inboundShape,
      upstream_shape: this.upstreamShape,
      status: this.status,
      error_code: this.errorCode,
      stream: this.stream,
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
      cache_read_tokens: usage?.cache_read_tokens ?? 0,
      cache_write_tokens: usage?.cache_write_tokens ?? 0,
      reasoning_tokens: usage?.reasoning_tokens ?? 0,
      cost: price && usage ? (usage.unbilled === undefined ? costOf(usage, price.rates, modified.factor) : 0) : null,
      currency: price?.currency ?? null,
      latency_ms: Math.round(((this.ended?.t ?? performance.now()) - this.t0) * 1000) / 1000,
      ttfb_ms: this.ttfbMs === null ? null : Math.round(this.ttfbMs * 1000) / 1000,
      attempts: this.attempts,
      client_aborted: this.clientAborted,
      client: this.client,
      extras: usageExtras(this.extras, usage, price, modified, route?.upstreamModel ?? null),
      client_request_id: this.clientRequestId,
      upstream_request_id: this.upstreamRequestId,
    };
  }
}
