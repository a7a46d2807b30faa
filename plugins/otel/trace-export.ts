// The SDK's tracer provider for Relay's spans: the operator's ratio sampler (sampler.ts), a batch span
// processor (spans are exported off the request path, in batches) and an OTLP exporter over
// HTTP/protobuf or gRPC. Kept to this plugin: nothing is registered globally.
import type { Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import { ExportResultCode } from '@opentelemetry/core';
import { Counter, type Registry } from 'prom-client';
import { samplerOf } from './sampler.ts';

export type OtlpProtocol = 'http/protobuf' | 'grpc';

export interface TraceExportOptions {
  protocol: OtlpProtocol;
  /** The collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); absent: the exporter's OTEL_* variables, else its default. */
  endpoint?: string;
  /** The share of requests traced, by trace id (sampler.ts sampleRatioOf). */
  sampleRatio: number;
  /** A client's sampled flag decides instead (Relay behind a trusted proxy). */
  trustInboundTraceContext: boolean;
  resource: Resource;
  /** Where relay_otel_spans_exported_total is registered. */
  metrics: Registry;
  /** Told of a failed export (at most once a minute). */
  onFailure(message: string): void;
}

export interface TraceExport {
  tracer: Tracer;
  /** Exports what is queued and stops. */
  shutdown(): Promise<void>;
}

/** The protocol: the option, else OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL, else HTTP/protobuf. */
export function protocolOf(option: OtlpProtocol | undefined, env: NodeJS.ProcessEnv = process.env): OtlpProtocol {
  const value = option ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (value === undefined || value === 'http/protobuf') return 'http/protobuf';
  if (value === 'grpc') return 'grpc';
  throw new Error(`OTLP protocol "${value}" is not supported for traces: use http/protobuf or grpc`);
}

async function exporterFor(protocol: OtlpProtocol, endpoint: string | undefined): Promise<SpanExporter> {
  const base = endpoint?.replace(/\/+$/, '');
  if (protocol === 'grpc') {
    // Loaded only when asked for: gRPC brings @grpc/grpc-js.
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter(base === undefined ? {} : { url: base });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(base === undefined ? {} : { url: `${base}/v1/traces` });
}

/** The exporter, with each batch's spans counted by result: a collector that is down shows in /metrics and the log. */
function counted(exporter: SpanExporter, options: TraceExportOptions): SpanExporter {
  const spans = new Counter({ name: 'relay_otel_spans_exported_total', help: 'Spans handed to the OTLP exporter, by result (success, failure)', labelNames: ['result'], registers: [options.metrics] });
  spans.inc({ result: 'success' }, 0);
  spans.inc({ result: 'failure' }, 0);
  let toldAt = 0;
  return {
    export(batch, done) {
      exporter.export(batch, (result) => {
        const ok = result.code === ExportResultCode.SUCCESS;
        spans.inc({ result: ok ? 'success' : 'failure' }, batch.length);
        if (!ok && Date.now() - toldAt >= 60_000) {
          toldAt = Date.now();
          options.onFailure(result.error?.message ?? 'export failed');
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The longest attribute value a span keeps (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT's role). */
const MAX_ATTRIBUTE_LENGTH = 1024;

export async function startTraceExport(options: TraceExportOptions): Promise<TraceExport> {
  const exporter = counted(await exporterFor(options.protocol, options.endpoint), options);
  const provider = new BasicTracerProvider({
    resource: options.resource,
    // Never the SDK's default (parent-based): a client's traceparent would choose what is traced.
    sampler: samplerOf(options.sampleRatio, options.trustInboundTraceContext),
    // OTEL_BSP_* (queue size, batch size, delay, timeout) apply.
    spanProcessors: [new BatchSpanProcessor(exporter)],
    // A caller's model name or path can be megabytes: an attribute keeps its first 1024 characters.
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
  });
  return {
    tracer: provider.getTracer('relay'),
    shutdown: () => provider.shutdown(),
  };
}
