// log-postgres: usage events in a Postgres table (Relay's database, or one of its own).
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { poolDatabase } from './pool-database.ts';
import { PostgresUsageBackend } from './postgres-usage-backend.ts';
import { scheduleRetention } from './retention.ts';

export const LogPostgresOptions = Type.Object({
  url: Type.Optional(Type.String({ description: 'postgres:// URL of a database for usage events; Relay\'s own database when unset.' })),
  table: Type.String({ default: 'relay_usage_events', pattern: '^[a-z_][a-z0-9_]{0,50}$', description: 'Table name (created and migrated by the plugin).' }),
  poolSize: Type.Integer({ minimum: 1, maximum: 50, default: 4, description: 'Connections of the own pool (with url).' }),
  queryTimeoutMs: Type.Integer({
    minimum: 100, maximum: 3_600_000, default: 30_000,
    description: 'Most one query of the own pool (with url) may take, the migration excepted: past it the query fails (a write is retried by the queue) and its connection is closed. Without url, the config\'s database.queryTimeoutMs applies.',
  }),
  retentionDays: Type.Integer({ minimum: 0, default: 0, description: 'Rows started longer ago are deleted, hourly, in batches, by one instance at a time; 0 keeps everything.' }),
}, { additionalProperties: false });

/** Retention sweeps: the first a minute after start, then hourly; rows per DELETE transaction. */
const SWEEP_INTERVAL_MS = 60 * 60_000;
const FIRST_SWEEP_MS = 60_000;
const SWEEP_BATCH_ROWS = 5000;

export default definePlugin({
  name: 'log-postgres',
  kind: 'log',
  description: 'Usage events in a Postgres table with indexes for the logs and usage queries.',
  options: LogPostgresOptions,
  backends: () => ({ usage: ['postgres'] }),
  async register(relay, options) {
    const own = options.url ? poolDatabase(options.url, options.poolSize, { queryTimeoutMs: options.queryTimeoutMs }) : null;
    const db = own ?? relay.sql;
    let stopRetention: (() => Promise<void>) | null = null;
    const backend = new PostgresUsageBackend({
      db, table: options.table, log: relay.log,
      onClose: async () => {
        await stopRetention?.();
        await own?.close();
      },
    });
    if (options.retentionDays > 0) {
      stopRetention = scheduleRetention({
        db, table: options.table, retentionDays: options.retentionDays, batchSize: SWEEP_BATCH_ROWS,
        intervalMs: SWEEP_INTERVAL_MS, firstSweepMs: FIRST_SWEEP_MS, log: relay.log,
        // The table exists before a sweep (a migration that failed at start is tried again).
        prepare: () => backend.init(),
      });
    }
    try {
      await backend.init();
    } catch (err) {
      // Relay still starts; events queue and retry until the database answers.
      relay.log.error({ err }, 'log-postgres: migrating the usage table failed; will retry on first use');
    }
    relay.hooks.addUsageBackend(backend);
  },
});
