// The SDK's tracer provider for Relay's spans: a parent-based ratio sampler, a batch span
// processor (spans are exported off the request path, in batches) and an OTLP exporter over
// HTTP/protobuf or gRPC. Kept to this plugin: nothing is registered globally.
import type { Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';

export type OtlpProtocol = 'http/protobuf' | 'grpc';

export interface TraceExportOptions {
  protocol: OtlpProtocol;
  /** The collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); absent: the exporter's OTEL_* variables, else its default. */
  endpoint?: string;
  /** Absent: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, else every trace. */
  sampleRatio?: number;
  resource: Resource;
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

export async function startTraceExport(options: TraceExportOptions): Promise<TraceExport> {
  const exporter = await exporterFor(options.protocol, options.endpoint);
  const provider = new BasicTracerProvider({
    resource: options.resource,
    ...(options.sampleRatio === undefined ? {} : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }) }),
    // OTEL_BSP_* (queue size, batch size, delay, timeout) apply.
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer('relay'),
    shutdown: () => provider.shutdown(),
  };
}
