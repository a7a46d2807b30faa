// Throughput and latency of observer.record() into each usage backend, against the real stores.
// record() is what the request path pays; "drained" is how fast the backend writes behind it.
//
//   npx tsx test/bench/logging-backends.ts [events=20000]
//
// Backends that are not reachable (Postgres at RELAY_TEST_DATABASE_URL, Redis at
// RELAY_TEST_REDIS_URL, ClickHouse via CLICKHOUSE_URL or chdb) are skipped with a note.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageBackend } from '../../core/observer/types.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { PostgresUsageBackend } from '../../plugins/log-postgres/postgres-usage-backend.ts';
import { poolDatabase } from '../../plugins/log-postgres/pool-database.ts';
import { ValkeyUsageBackend } from '../../plugins/log-valkey/valkey-usage-backend.ts';
import { ClickHouseUsageBackend } from '../../plugins/log-clickhouse/clickhouse-usage-backend.ts';
import { ensureClickHouse } from '../support/clickhouse.ts';
import { silentLog, testSettings, usageEvent } from '../support/observer-fixtures.ts';

const COUNT = Number(process.argv[2] ?? 20_000);

interface Candidate {
  id: string;
  open(): Promise<{ backend: UsageBackend; cleanup(): Promise<void> } | string>;
}

const candidates: Candidate[] = [
  {
    id: 'file',
    async open() {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-bench-'));
      const backend = new FileUsageBackend({ dir, maxFileBytes: 32 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 });
      return { backend, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    id: 'postgres',
    async open() {
      const db = poolDatabase(process.env.RELAY_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test', 4);
      const table = `bench_${randomBytes(4).toString('hex')}`;
      const backend = new PostgresUsageBackend({ db, table });
      try { await backend.init(); } catch (err) { await db.close(); return `unreachable (${(err as Error).message})`; }
      return { backend, cleanup: async () => { await db.query(`DROP TABLE ${table}`); await db.query('DELETE FROM relay_log_postgres_migrations WHERE table_name = $1', [table]); await db.close(); } };
    },
  },
  {
    id: 'valkey',
    async open() {
      const redis = new Redis(process.env.RELAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
      redis.on('error', () => {});
      try { await redis.connect(); } catch (err) { return `unreachable (${(err as Error).message})`; }
      const keyPrefix = `relay-bench:${randomBytes(4).toString('hex')}:`;
      const backend = new ValkeyUsageBackend({ redis, keyPrefix, maxEvents: COUNT * 2, ttlSeconds: 3600 });
      return { backend, cleanup: async () => { const keys = await redis.keys(`${keyPrefix}*`); if (keys.length) await redis.del(...keys); redis.disconnect(); } };
    },
  },
  {
    id: 'clickhouse',
    async open() {
      const ch = await ensureClickHouse();
      if ('skip' in ch) return ch.skip;
      const table = `bench_${randomBytes(4).toString('hex')}`;
      const backend = new ClickHouseUsageBackend({ client: ch.client, table, ttlDays: 0, ownsClient: false });
      await backend.init();
      return { backend, cleanup: async () => { await ch.client.command({ query: `DROP TABLE ${table}` }); } };
    },
  },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const events = Array.from({ length: COUNT }, () => usageEvent());
console.log(`observer.record() of ${COUNT} events per backend (batch 500, queue bound ${COUNT * 2})`);
console.log('backend     record p50 us  record p99 us  record/s (caller)  drained events/s  dropped');
for (const candidate of candidates) {
  const opened = await candidate.open();
  if (typeof opened === 'string') {
    console.log(`${candidate.id.padEnd(11)} skipped: ${opened}`);
    continue;
  }
  const settings = testSettings({ 'usage-logging': { backend: opened.backend.id } });
  const observer = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxBatchSize: 500, maxQueued: COUNT * 2, maxDelayMs: 50 } });
  observer.addUsageBackend(opened.backend);
  const latencies = new Float64Array(COUNT);
  const started = performance.now();
  for (let i = 0; i < COUNT; i++) {
    const t0 = performance.now();
    observer.record(events[i], null);
    latencies[i] = performance.now() - t0;
    // Yield now and then, as a server between requests would, so the queue can write.
    if (i % 200 === 199) await new Promise((r) => setImmediate(r));
  }
  const recordSeconds = (performance.now() - started) / 1000;
  await observer.flush();
  const drainedSeconds = (performance.now() - started) / 1000;
  const stats = observer.stats().usage[opened.backend.id];
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(`${candidate.id.padEnd(11)} ${(percentile(sorted, 50) * 1000).toFixed(1).padStart(13)}  ${(percentile(sorted, 99) * 1000).toFixed(1).padStart(13)}  ${Math.round(COUNT / recordSeconds).toString().padStart(17)}  ${Math.round(stats.written / drainedSeconds).toString().padStart(16)}  ${String(stats.dropped).padStart(7)}`);
  await observer.close();
  await opened.cleanup();
}
process.exit(0);
