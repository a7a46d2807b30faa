// Database over a Postgres server through `pg`: a bounded pool for queries (pg-pool.ts) and one
// dedicated client for LISTEN that reconnects with backoff when the connection is lost.
import pg from 'pg';
import type { Logger } from 'pino';
import { createPgPool, KEEPALIVE_DELAY_MS, type PgPool } from './pg-pool.ts';
import type { Database, QueryOptions, QueryResult, Queryable, TransactionOptions } from './types.ts';

interface Listener {
  channel: string;
  onNotify: (payload: string) => void;
  onReconnect?: () => void;
}

export interface PostgresDatabaseOptions {
  /** Deadline of one query (migrations excepted); past it the query fails and its connection is dropped. */
  queryTimeoutMs?: number;
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly pool: PgPool;
  private listenClient: pg.Client | null = null;
  private readonly listeners: Listener[] = [];
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(private readonly url: string, private readonly log?: Logger, options: PostgresDatabaseOptions = {}) {
    this.pool = createPgPool(url, {
      max: 10, queryTimeoutMs: options.queryTimeoutMs,
      // An idle client that loses its server emits here; without a handler it would crash the process.
      onIdleError: (err) => this.log?.warn({ err: err.message }, 'postgres pool client error'),
    });
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>> {
    return this.pool.query<T>(sql, params, options);
  }

  exec(sql: string): Promise<void> {
    return this.pool.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.pool.transaction(fn, options);
  }

  async listen(channel: string, onNotify: (payload: string) => void, onReconnect?: () => void): Promise<void> {
    const listener = { channel, onNotify, onReconnect };
    this.listeners.push(listener);
    try {
      if (this.listenClient) {
        await this.listenClient.query(`LISTEN ${quoteIdent(channel)}`);
      } else {
        await this.connectListener(false);
      }
    } catch (err) {
      // Not subscribed: a retry (catching up after an outage at start) must not subscribe twice.
      this.listeners.splice(this.listeners.indexOf(listener), 1);
      throw err;
    }
  }

  private async connectListener(isReconnect: boolean): Promise<void> {
    // Keepalive: an idle LISTEN connection to a vanished server would otherwise miss every NOTIFY unnoticed.
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS });
    client.on('notification', (msg) => {
      for (const l of this.listeners) if (l.channel === msg.channel) l.onNotify(msg.payload ?? '');
    });
    client.on('error', (err) => {
      this.log?.warn({ err: err.message }, 'postgres LISTEN connection lost');
      this.scheduleReconnect(client);
    });
    client.on('end', () => this.scheduleReconnect(client));
    await client.connect();
    for (const channel of new Set(this.listeners.map((l) => l.channel))) await client.query(`LISTEN ${quoteIdent(channel)}`);
    this.listenClient = client;
    if (isReconnect) {
      this.log?.info('postgres LISTEN connection re-established; resynchronising');
      for (const l of this.listeners) l.onReconnect?.();
    }
  }

  private scheduleReconnect(failed: pg.Client, attempt = 0): void {
    if (this.closed || this.listenClient !== failed || this.reconnectTimer) return;
    this.listenClient = null;
    failed.removeAllListeners();
    failed.on('error', () => undefined);
    void failed.end().catch(() => undefined);
    const retry = (n: number) => {
      const delay = Math.min(200 * 2 ** n, 5_000);
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        if (this.closed) return;
        this.connectListener(true).catch(() => retry(n + 1));
      }, delay);
      this.reconnectTimer.unref();
    };
    retry(attempt);
  }

  async ping(timeoutMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database ping timed out')), timeoutMs);
    });
    try {
      await Promise.race([this.pool.query('SELECT 1'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.listenClient;
    this.listenClient = null;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
    await this.pool.close().catch(() => undefined);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
