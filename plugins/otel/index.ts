// otel: OpenTelemetry traces of inference requests (GenAI semantic conventions, W3C traceparent
// in and out), exported over OTLP with the SDK's batch processor; optionally /metrics as OTLP metrics.
import { definePlugin, Type } from '../../core/plugin-api.ts';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { createRequestTracer } from './request-tracer.ts';
import { protocolOf, startTraceExport } from './trace-export.ts';
import { sampleRatioOf } from './sampler.ts';
import { startMetricsExport } from './metrics-export.ts';

export const OtelOptions = Type.Object({
  endpoint: Type.Optional(Type.String({
    pattern: '^https?://', maxLength: 2048,
    description: 'The collector\'s base URL (http://collector:4318 for HTTP/protobuf, http://collector:4317 for gRPC); absent: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, else localhost.',
  })),
  protocol: Type.Optional(Type.Union([Type.Literal('http/protobuf'), Type.Literal('grpc')], {
    description: 'OTLP transport; absent: OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, else http/protobuf.',
  })),
  sampleRatio: Type.Optional(Type.Number({
    minimum: 0, maximum: 1,
    description: 'Share of requests traced, by trace id, whatever a client\'s traceparent says (unless trustInboundTraceContext); absent: OTEL_TRACES_SAMPLER(_ARG), else 1.',
  })),
  trustInboundTraceContext: Type.Boolean({
    default: false,
    description: 'Relay is behind a proxy that sets or strips traceparent, tracestate and baggage: a client\'s sampled flag decides sampling, and its tracestate and baggage go upstream.',
  }),
  serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'service.name of the spans; absent: OTEL_SERVICE_NAME, else relay.' })),
  metrics: Type.Boolean({ default: false, description: 'Also export the /metrics registry as OTLP metrics (HTTP/protobuf, to the same endpoint).' }),
  metricsIntervalMs: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000, description: 'How often metrics are exported.' }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'otel',
  kind: 'other',
  description: 'OpenTelemetry traces of inference requests (GenAI conventions, W3C traceparent in and out) over OTLP HTTP/protobuf or gRPC; optionally OTLP metrics.',
  options: OtelOptions,
  async register(relay, options) {
    const resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': options.serviceName ?? process.env.OTEL_SERVICE_NAME ?? 'relay' }));
    const protocol = protocolOf(options.protocol);
    const sampleRatio = sampleRatioOf(options.sampleRatio);
    const trustInboundTraceContext = options.trustInboundTraceContext;
    const traces = await startTraceExport({
      protocol, endpoint: options.endpoint, sampleRatio, trustInboundTraceContext, resource, metrics: relay.metrics,
      onFailure: (message) => relay.log.warn({ err: message }, 'otel: spans could not be exported (relay_otel_spans_exported_total{result="failure"} counts them)'),
    });
    relay.hooks.setRequestTracer(createRequestTracer(traces.tracer, { trustInboundTraceContext }));
    relay.onClose(() => traces.shutdown());
    if (options.metrics) {
      const metrics = startMetricsExport({ registry: relay.metrics, endpoint: options.endpoint, intervalMs: options.metricsIntervalMs, resource });
      relay.onClose(() => metrics.shutdown());
    }
    // The endpoint's origin only: a URL may carry credentials.
    relay.log.info({ protocol, endpoint: options.endpoint === undefined ? null : new URL(options.endpoint).origin, sampleRatio, trustInboundTraceContext, metrics: options.metrics }, 'otel: tracing inference requests');
  },
});
