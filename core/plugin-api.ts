// The public plugin API: what a plugin needs to register itself and implement a hook, and nothing
// of the kernel's internals. plugins/README.md documents every name here. The shared vocabularies
// have their own modules: relay-gateway/canonical (the canonical request, response and stream
// events), relay-gateway/catalog (catalog entities), relay-gateway/log-backends (helpers for usage
// and payload backends) and relay-gateway/clients (recognising known clients).
export { Type, type Static, type TSchema } from '@sinclair/typebox';

export { definePlugin } from './plugins/define.ts';
export type { RelayContext, InferenceCall, Attribution } from './plugins/context.ts';
export type {
  InboundHttpRequest, InboundRequest, Principal, Authenticator, ModelResolver, Route, ShapeId,
  VendorAdapter, UpstreamRequest, UpstreamResponse, UpstreamBody, UsageRequest, StreamInspector, StreamDecoder,
  InboundCodec, StreamEncoder, EncodeContext, RenderedError, UsageEvent, CapturedPayload, Recorder,
} from './hooks.ts';
export type { UsageBackend, PayloadBackend } from './observer/types.ts';
export { RelayError, StartupError, ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type ErrorType, type RelayErrorBody } from './errors.ts';
export { sendToHost, sendUpstream, joinUrl } from './http/upstream.ts';
export { readUpstreamBody } from './http/read-body.ts';
export { readUpstreamError } from './pipeline/upstream-error.ts';
export { sseFrame, SseParser } from './http/sse.ts';
export { mountInferenceRoute, mountShapedNotFound } from './http/inference-route.ts';
export { validateBody } from './http/validate.ts';
export { PACKAGE_ROOT } from './package-root.ts';
