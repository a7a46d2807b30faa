// A real OTLP trace receiver for tests: OTLP/HTTP protobuf (POST /v1/traces) and OTLP/gRPC
// (TraceService/Export), both decoding ExportTraceServiceRequest with the official .proto files
// (test/support/otlp-proto, from open-telemetry/opentelemetry-proto) through protobufjs.
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import protobuf from 'protobufjs';
import * as grpc from '@grpc/grpc-js';

const PROTO_DIR = path.join(import.meta.dirname, 'otlp-proto');

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto']);
  return root;
}

const root = loadRoot();
const TraceRequest = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const TraceResponse = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
const MetricsRequest = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');
const MetricsResponse = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse');

export type AttributeValue = string | number | boolean | null;

/** One received span, its ids as hex and its attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** SPAN_KIND_SERVER = 2, SPAN_KIND_CLIENT = 3. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; attributes: Record<string, AttributeValue> }>;
  /** STATUS_CODE_UNSET = 0, OK = 1, ERROR = 2. */
  status: number;
  resource: Record<string, AttributeValue>;
  scope: string;
}

/** A received metric: its name and the attributes of each data point. */
export interface ReceivedMetric {
  name: string;
  points: Array<Record<string, AttributeValue>>;
}

function valueOf(v: any): AttributeValue {
  if (!v) return null;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue;
  return JSON.stringify(v);
}

function attributesOf(list: any[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex');

export function decodeTraces(bytes: Uint8Array): ReceivedSpan[] {
  const message = TraceRequest.toObject(TraceRequest.decode(bytes), { longs: Number, defaults: false }) as any;
  const spans: ReceivedSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name, kind: s.kind ?? 0,
          attributes: attributesOf(s.attributes), events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
          status: s.status?.code ?? 0, resource, scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

export function decodeMetrics(bytes: Uint8Array): ReceivedMetric[] {
  const message = MetricsRequest.toObject(MetricsRequest.decode(bytes), { longs: Number, defaults: false }) as any;
  const metrics: ReceivedMetric[] = [];
  for (const rm of message.resourceMetrics ?? []) {
    for (const sm of rm.scopeMetrics ?? []) {
      for (const m of sm.metrics ?? []) {
        const data = m.sum ?? m.gauge ?? m.histogram ?? m.exponentialHistogram ?? {};
        metrics.push({ name: m.name, points: (data.dataPoints ?? []).map((p: any) => attributesOf(p.attributes)) });
      }
    }
  }
  return metrics;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:port: the base URL an exporter is given. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly metrics: ReceivedMetric[];
  /** Every request body received, as bytes (to look for text that must not be there). */
  readonly bodies: Buffer[];
  close(): Promise<void>;
}

/** OTLP/HTTP protobuf on /v1/traces and /v1/metrics. */
export async function startOtlpHttpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const reply = (status: number, bytes: Uint8Array) => {
        res.writeHead(status, { 'content-type': 'application/x-protobuf' });
        res.end(Buffer.from(bytes));
      };
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/x-protobuf') return reply(415, new Uint8Array());
      try {
        bodies.push(body);
        if (req.url === '/v1/traces') {
          spans.push(...decodeTraces(body));
          return reply(200, TraceResponse.encode(TraceResponse.create({})).finish());
        }
        if (req.url === '/v1/metrics') {
          metrics.push(...decodeMetrics(body));
          return reply(200, MetricsResponse.encode(MetricsResponse.create({})).finish());
        }
        reply(404, new Uint8Array());
      } catch {
        reply(400, new Uint8Array());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`, spans, metrics, bodies,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** OTLP/gRPC: the TraceService's Export, its messages decoded with the same definitions. */
export async function startOtlpGrpcReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const server = new grpc.Server();
  const raw = (b: Buffer) => b;
  server.addService({
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false, responseStream: false,
      requestSerialize: raw, requestDeserialize: raw,
      responseSerialize: raw, responseDeserialize: raw,
    },
  }, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      try {
        bodies.push(call.request);
        spans.push(...decodeTraces(call.request));
        callback(null, Buffer.from(TraceResponse.encode(TraceResponse.create({})).finish()));
      } catch (err) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message });
      }
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return {
    url: `http://127.0.0.1:${port}`, spans, metrics: [], bodies,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
