// log-clickhouse: usage events in a ClickHouse MergeTree table.
import { Type, definePlugin } from '../../core/plugin-api.ts';
import path from 'node:path';
import { openClickHouse } from './client.ts';
import { ClickHouseUsageBackend } from './clickhouse-usage-backend.ts';

export const LogClickHouseOptions = Type.Object({
  url: Type.String({ default: 'http://127.0.0.1:8123', description: 'HTTP(S) URL of the ClickHouse server.' }),
  database: Type.String({ default: 'default', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
  username: Type.Optional(Type.String()),
  passwordEnv: Type.Optional(Type.String({ description: 'Name of the environment variable holding the password.' })),
  table: Type.String({ default: 'relay_usage_events', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
  ttlDays: Type.Integer({ minimum: 0, default: 0, description: 'Rows older than this many days are removed by ClickHouse; 0 keeps them.' }),
  embedded: Type.Optional(Type.Object({
    path: Type.String({ default: 'clickhouse', description: 'Data directory; relative paths are under Relay\'s data directory; ":memory:" keeps nothing.' }),
  }, { additionalProperties: false, description: 'Run ClickHouse in-process with chdb (one Relay instance; needs the chdb package) instead of url.' })),
}, { additionalProperties: false });

export default definePlugin({
  name: 'log-clickhouse',
  kind: 'log',
  description: 'Usage events in ClickHouse (MergeTree, partitioned by month) for analytics at volume.',
  options: LogClickHouseOptions,
  backends: () => ({ usage: ['clickhouse'] }),
  async register(relay, options) {
    const embedded = options.embedded && {
      path: options.embedded.path === ':memory:' ? ':memory:' : path.resolve(relay.dataDir, options.embedded.path),
    };
    const client = await openClickHouse({ ...options, embedded }, relay.log);
    const backend = new ClickHouseUsageBackend({ client, table: options.table, ttlDays: options.ttlDays, ownsClient: true });
    try {
      await backend.init();
    } catch (err) {
      relay.log.error({ err }, 'log-clickhouse: creating the usage table failed; will retry on first use');
    }
    relay.hooks.addUsageBackend(backend);
  },
});
