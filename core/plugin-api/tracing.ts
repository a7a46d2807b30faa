// relay-gateway/tracing: what a request tracer is told of a request (its start, each upstream
// call, the first byte, its usage event), for plugins such as otel.
export type { RequestTracer, RequestTrace, AttemptTrace } from '../hooks.ts';
