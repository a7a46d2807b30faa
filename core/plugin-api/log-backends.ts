// relay-gateway/log-backends: what usage and payload backends share: the read queries they answer,
// the one batching queue every backend writes through, a Postgres pool and Valkey client options
// bounded in time, the ClickHouse client's log option (into pino), cursors, totals and money in micro-units.
// A backend's write throws to have its batch retried (`retryable: false`: dropped, reason
// `rejected`), or resolves with a BatchWriteResult `{ rejected: n }` when n events of a batch it
// otherwise stored never can be: the queue counts those n as dropped (`rejected`), the rest written.
// Each write is given BatchWriteOptions: a signal aborted when the queue stops waiting for it.
export type * from '../observer/types.ts';
export type { Database, QueryOptions, Queryable, TransactionOptions } from '../db/types.ts';
export { createPgPool, type PgPool, type PgPoolOptions } from '../db/pg-pool.ts';
export { valkeyClientOptions } from '../server/valkey-options.ts';
export { createBatchQueue, type BatchQueue, type BatchQueueOptions, type BatchWriteOptions, type BatchWriteResult, type DropReason, type RetryOptions, type BatchQueueStats } from '../observer/batch-queue.ts';
export { encodeCursor, decodeCursor, compareNewestFirst, isAfterCursor, type CursorPosition } from '../observer/cursor.ts';
export {
  emptyTotals, addToTotals, matchesFilter, matchesStatus, pageOfEvents, groupKey, bucketStartMs,
  SummaryBuilder, TimeseriesBuilder, summarizeEvents, timeseriesOfEvents, sortPoints,
} from '../observer/usage-query.ts';
export { MICROS_PER_UNIT, toMicros, fromMicros, addMoney } from '../observer/money.ts';
export { SessionsBuilder, sessionsOfEvents, sortSessions, cacheHitRatio, costsPerCurrency } from '../observer/sessions.ts';
export { SESSION_EXTRAS, sessionIdOf } from '../observer/session-id.ts';
export { usageEventFromRow } from '../observer/usage-row.ts';
export { untilAborted } from '../observer/until-aborted.ts';
export { clickHouseClientLog } from '../observer/clickhouse-client-log.ts';
