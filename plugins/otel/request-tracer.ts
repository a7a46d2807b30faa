// The otel plugin's RequestTracer: a SERVER span per inference request (in the client's W3C trace,
// when it sent a traceparent) and a CLIENT span per upstream call, whose context goes upstream as
// traceparent. The client's tracestate and baggage are its own word: they are read, and go upstream,
// only when the operator trusts the inbound context. Attributes are ids, counts and catalog names:
// never prompt or completion.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { InboundRequest, Route, ShapeId, UsageEvent } from '../../core/plugin-api.ts';
import type { AttemptTrace, RequestTrace, RequestTracer } from '../../core/plugin-api/tracing.ts';
import { echoedName } from '../../core/plugin-api/canonical.ts';
import { GEN_AI, operationName, providerName } from './gen-ai.ts';

const traceContext = new W3CTraceContextPropagator();
const withBaggage = new CompositePropagator({ propagators: [traceContext, new W3CBaggagePropagator()] });

export interface RequestTracerOptions {
  /** The client's tracestate and baggage are kept and sent upstream (its sampled flag is the sampler's: sampler.ts). */
  trustInboundTraceContext: boolean;
}

export function createRequestTracer(tracer: Tracer, options: RequestTracerOptions = { trustInboundTraceContext: false }): RequestTracer {
  const trusted = options.trustInboundTraceContext;
  const propagator = trusted ? withBaggage : traceContext;
  return {
    startRequest(request: InboundRequest, model: string, stream: boolean): RequestTrace {
      const parent = parentOf(request.headers, trusted);
      const operation = operationName(request.shape);
      // A span's name is not bounded by the SDK's attribute limit: the caller's model name is, here.
      const span = tracer.startSpan(`${operation} ${echoedName(model)}`, { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) {
        const q = request.url.indexOf('?');
        span.setAttributes({
          [GEN_AI.operation]: operation,
          [GEN_AI.requestModel]: model,
          [GEN_AI.requestStream]: stream,
          'http.request.method': request.method,
          'url.path': q < 0 ? request.url : request.url.slice(0, q),
          'relay.request_id': request.id,
          'relay.inbound_shape': request.shape,
        });
      }
      return new OtelRequestTrace(tracer, propagator, span, trace.setSpan(parent, span));
    },
  };
}

/** The client's context: its traceparent alone (trace id and parent span), or all of it when trusted. */
function parentOf(headers: InboundRequest['headers'], trusted: boolean): Context {
  // Only a request that carries one pays for reading it.
  if (trusted) return headers.traceparent === undefined && headers.baggage === undefined ? ROOT_CONTEXT : withBaggage.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
  return headers.traceparent === undefined ? ROOT_CONTEXT : traceContext.extract(ROOT_CONTEXT, { traceparent: headers.traceparent }, defaultTextMapGetter);
}

class OtelRequestTrace implements RequestTrace {
  private attempts = 0;
  private provider: string | null = null;

  constructor(private readonly tracer: Tracer, private readonly propagator: TextMapPropagator, private readonly span: Span, private readonly context: Context) {}

  startAttempt(route: Route, upstreamShape: ShapeId): AttemptTrace {
    this.attempts++;
    const operation = operationName(upstreamShape);
    this.provider = providerName(route);
    const span = this.tracer.startSpan(`${operation} ${route.upstreamModel}`, { kind: SpanKind.CLIENT }, this.context);
    if (span.isRecording()) {
      span.setAttributes({
        [GEN_AI.operation]: operation,
        [GEN_AI.provider]: this.provider,
        [GEN_AI.system]: this.provider,
        [GEN_AI.requestModel]: route.upstreamModel,
        'relay.attempt': this.attempts,
        'relay.binding': `${route.model.metadata.slug}/${route.host.metadata.slug}`,
        'relay.host': route.host.metadata.slug,
        'relay.provider': route.provider.metadata.slug,
        'relay.upstream_shape': upstreamShape,
        ...(route.hostKey ? { 'relay.host_key.id': route.hostKey.metadata.id } : {}),
        ...serverOf(route.adapter.upstreamBaseUrl?.(route) ?? route.host.spec.baseUrl),
      });
    }
    // The upstream sees this call's span as its parent (sampled or not, as W3C Trace Context says);
    // the kernel sends no trace context of the client's besides (hooks.ts AttemptTrace).
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(this.context, span), headers, defaultTextMapSetter);
    return new OtelAttemptTrace(span, headers);
  }

  firstByte(): void {
    if (this.span.isRecording()) this.span.addEvent('relay.first_byte');
  }

  end(event: UsageEvent): void {
    const span = this.span;
    if (span.isRecording()) {
      span.setAttributes({
        'http.response.status_code': event.status,
        'relay.attempts': event.attempts,
        [GEN_AI.inputTokens]: event.input_tokens,
        [GEN_AI.outputTokens]: event.output_tokens,
        [GEN_AI.cacheReadTokens]: event.cache_read_tokens,
        [GEN_AI.cacheWriteTokens]: event.cache_write_tokens,
        [GEN_AI.reasoningTokens]: event.reasoning_tokens,
      });
      if (this.provider !== null) span.setAttributes({ [GEN_AI.provider]: this.provider, [GEN_AI.system]: this.provider });
      // The model that generated the answer: the one it names when that is another (a vendor's own fallback).
      const responseModel = event.extras.answered_by ?? event.upstream_model;
      if (responseModel !== null) span.setAttribute(GEN_AI.responseModel, responseModel);
      if (event.model_slug !== null) span.setAttribute('relay.model', event.model_slug);
      if (event.ttfb_ms !== null) span.setAttribute(GEN_AI.timeToFirstChunk, event.ttfb_ms / 1000);
      if (event.client_request_id) span.setAttribute('relay.client_request_id', event.client_request_id);
      if (event.upstream_request_id) span.setAttribute('relay.upstream_request_id', event.upstream_request_id);
      if (event.client) span.setAttribute('relay.client', event.client);
      if (event.error_code !== null) {
        span.setAttribute('error.type', event.error_code);
        // A server span's 4xx is the caller's error, not Relay's (HTTP conventions); a stream cut after a 200 is.
        if (event.status >= 500 || event.status < 400) span.setStatus({ code: SpanStatusCode.ERROR, message: event.error_code });
      }
    }
    span.end();
  }
}

class OtelAttemptTrace implements AttemptTrace {
  constructor(private readonly span: Span, readonly headers: Record<string, string>) {}

  response(status: number, upstreamRequestId: string | null): void {
    if (!this.span.isRecording()) return;
    this.span.setAttribute('http.response.status_code', status);
    if (upstreamRequestId) this.span.setAttribute('relay.upstream_request_id', upstreamRequestId);
    if (status >= 400) {
      this.span.setAttribute('error.type', String(status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  end(failover: string | null, error?: string): void {
    if (this.span.isRecording()) {
      if (failover !== null) {
        this.span.setAttribute('relay.failover.reason', failover);
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: `failed over: ${failover}` });
      } else if (error !== undefined) {
        this.span.setAttribute('error.type', error);
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    this.span.end();
  }
}

/** server.address and server.port of a host's base URL (its credentials and path left out). */
function serverOf(baseUrl: string): Record<string, string | number> {
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { 'server.address': url.hostname, 'server.port': port };
  } catch {
    return {};
  }
}
