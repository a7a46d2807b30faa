// Recent usage history in Valkey/Redis: one key per event (with a TTL) and a sorted set of
// request ids scored by start time, capped to the newest `maxEvents`. Reads load the part of the
// history inside the query's window and answer in memory.
import type { Redis } from 'ioredis';
import { pageOfEvents, sessionsOfEvents, summarizeEvents, timeseriesOfEvents, untilAborted, type BatchWriteOptions, type ListPage, type ListQuery, type SessionSummary, type SessionsQuery, type Summary, type SummaryQuery, type TimeseriesPoint, type TimeseriesQuery, type UsageFilter } from '../../core/plugin-api/log-backends.ts';
import { type UsageBackend, type UsageEvent } from '../../core/plugin-api.ts';

export interface ValkeyUsageBackendOptions {
  redis: Redis;
  keyPrefix: string;
  maxEvents: number;
  ttlSeconds: number;
  /** Closes a connection the backend opened itself (not relay.redis). */
  onClose?: () => Promise<void>;
}

const MGET_CHUNK = 1000;

export class ValkeyUsageBackend implements UsageBackend {
  readonly id = 'valkey';
  private readonly redis: Redis;
  private readonly indexKey: string;

  constructor(private readonly options: ValkeyUsageBackendOptions) {
    this.redis = options.redis;
    this.indexKey = `${options.keyPrefix}index`;
  }

  private eventKey(requestId: string): string {
    return `${this.options.keyPrefix}event:${requestId}`;
  }

  /**
   * An abort of `signal` ends the call at once and closes the connection (to open it again):
   * ioredis cannot withdraw a command it sent, and a silent connection would hold the retry's.
   */
  async write(events: UsageEvent[], options?: BatchWriteOptions): Promise<void> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const onAbort = () => this.redis.disconnect(true);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await this.store(events, signal);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async store(events: UsageEvent[], signal: AbortSignal | undefined): Promise<void> {
    const tx = this.redis.multi();
    for (const event of events) {
      tx.set(this.eventKey(event.request_id), JSON.stringify(event), 'EX', this.options.ttlSeconds);
      tx.zadd(this.indexKey, Date.parse(event.started_at), event.request_id);
    }
    tx.zremrangebyscore(this.indexKey, '-inf', `(${Date.now() - this.options.ttlSeconds * 1000}`);
    tx.zcard(this.indexKey);
    // Commands of an aborted call are not sent again on the next connection (valkey-options.ts); the queue's retry writes them (a SET and a ZADD of the same event: harmless).
    const results = await untilAborted(tx.exec(), signal);
    if (!results) throw new Error('valkey transaction was aborted');
    for (const [err] of results) if (err) throw err;
    const size = Number(results[results.length - 1][1]);
    if (size > this.options.maxEvents) await untilAborted(this.trim(size - this.options.maxEvents), signal);
  }

  /** Drops the oldest `count` events beyond the cap. */
  private async trim(count: number): Promise<void> {
    // A string stop: ioredis 6.0.0's typings take no number there (redis/ioredis#2163, fixed after it); the same on the wire.
    const oldest = await this.redis.zrange(this.indexKey, 0, String(count - 1));
    if (oldest.length === 0) return;
    await this.redis.multi().del(...oldest.map((id) => this.eventKey(id))).zrem(this.indexKey, ...oldest).exec();
  }

  /** The held events that started inside the filter's window, newest first. */
  private async eventsInWindow(filter: UsageFilter): Promise<UsageEvent[]> {
    const max = filter.to ? `(${filter.to.getTime()}` : '+inf';
    const min = filter.from ? String(filter.from.getTime()) : '-inf';
    const ids = await this.redis.zrevrangebyscore(this.indexKey, max, min);
    const events: UsageEvent[] = [];
    for (let i = 0; i < ids.length; i += MGET_CHUNK) {
      const values = await this.redis.mget(...ids.slice(i, i + MGET_CHUNK).map((id) => this.eventKey(id)));
      for (const value of values) if (value) events.push(JSON.parse(value) as UsageEvent); // null: expired
    }
    return events;
  }

  async list(query: ListQuery): Promise<ListPage> {
    return pageOfEvents(await this.eventsInWindow(query), query);
  }

  async get(requestId: string): Promise<UsageEvent | null> {
    const value = await this.redis.get(this.eventKey(requestId));
    return value ? (JSON.parse(value) as UsageEvent) : null;
  }

  async summary(query: SummaryQuery): Promise<Summary> {
    return summarizeEvents(await this.eventsInWindow(query), query);
  }

  async timeseries(query: TimeseriesQuery): Promise<TimeseriesPoint[]> {
    return timeseriesOfEvents(await this.eventsInWindow(query), query);
  }

  async sessions(query: SessionsQuery): Promise<SessionSummary[]> {
    return sessionsOfEvents(await this.eventsInWindow(query), query);
  }

  async close(): Promise<void> {
    await this.options.onClose?.();
  }
}
