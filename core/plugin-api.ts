// The public plugin API: the one module built-in and in-house plugins import from core.
// Everything a built-in plugin can do, an out-of-tree plugin can do with this module.
export { Type, type Static, type TSchema } from '@sinclair/typebox';

export { definePlugin, isRelayPlugin, type PluginDefinition, type PluginKind, type RelayPlugin } from './plugins/define.ts';
export type { RelayContext, HookRegistry, InferenceCall, Pipeline, Attribution } from './plugins/context.ts';
export type * from './hooks.ts';
export type * from './observer/types.ts';
export type { Settings, SettingsValues, UsageLoggingSetting, PayloadLoggingSetting } from './settings/types.ts';
export type { Database, Queryable } from './db/types.ts';
export type * from './catalog/kinds.ts';
export type { CatalogSnapshot } from './catalog/snapshot.ts';

export * as canonical from './canonical/types.ts';
export type {
  CanonicalRequest, CanonicalResponse, StreamEvent, Usage, ContentPart, Message, Tool, ToolChoice, StopReason,
  TextPart, ImagePart, ToolCallPart, ToolResultPart, ReasoningPart, RefusalPart, PartStart, PartDelta, ResponseFormat,
  ReasoningEffort, CustomTool, FunctionTool, Role, CanonicalErrorBody,
} from './canonical/types.ts';
export { emptyUsage } from './canonical/types.ts';
export { dispatchByShape, type ShapeCodec, type TranslationHooks } from './canonical/shape-dispatch.ts';

export { RelayError, relayError, isRelayError, ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type ErrorType, type RelayErrorBody } from './errors.ts';
export { sseFrame, SseParser } from './http/sse.ts';
export { sendUpstream, sendToHost, joinUrl, type SendOptions } from './http/upstream.ts';
export type { UpstreamClient } from './http/upstream-client.ts';
export { filterForwardHeaders, CREDENTIAL_HEADERS } from './http/headers.ts';
export { validateBody } from './http/validate.ts';
export { createBatchQueue, type BatchQueue, type BatchQueueOptions } from './observer/batch-queue.ts';
export type { DropReason, RetryOptions, BatchQueueStats } from './observer/batch-queue.ts';
// Shared by usage backends that answer reads in memory (log-file, log-valkey, in-house sinks).
export { encodeCursor, decodeCursor, compareNewestFirst, isAfterCursor, type CursorPosition } from './observer/cursor.ts';
export {
  emptyTotals, addToTotals, matchesFilter, matchesStatus, pageOfEvents, groupKey, bucketStartMs,
  SummaryBuilder, TimeseriesBuilder, summarizeEvents, timeseriesOfEvents, sortPoints,
} from './observer/usage-query.ts';
export { SessionsBuilder, sessionsOfEvents, sortSessions, cacheHitRatio } from './observer/sessions.ts';
export { SESSION_EXTRAS, sessionIdOf } from './observer/session-id.ts';
// A request's price: a pricings entity, else the shipped table (core/pricing/).
export { priceFor, tableEntryFor, type Price } from './pricing/price-lookup.ts';
// Money in whole micro-units, so backends' cost totals agree to the last digit.
export { MICROS_PER_UNIT, toMicros, fromMicros, addMoney } from './observer/money.ts';
export { PACKAGE_ROOT } from './package-root.ts';
export { mountInferenceRoute, mountShapedNotFound, type InferenceRouteOptions } from './http/inference-route.ts';
export {
  CUSTOM_INPUT_PARAMETER, CUSTOM_INPUT_SCHEMA, customToolNames, customToolDescription, wrapCustomInput, unwrapCustomInput,
} from './canonical/custom-tools.ts';
