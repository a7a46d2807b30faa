// log-postgres: usage events in a Postgres table (Relay's database, or one of its own).
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { poolDatabase } from './pool-database.ts';
import { PostgresUsageBackend } from './postgres-usage-backend.ts';

export const LogPostgresOptions = Type.Object({
  url: Type.Optional(Type.String({ description: 'postgres:// URL of a database for usage events; Relay\'s own database when unset.' })),
  table: Type.String({ default: 'relay_usage_events', pattern: '^[a-z_][a-z0-9_]{0,50}$', description: 'Table name (created and migrated by the plugin).' }),
  poolSize: Type.Integer({ minimum: 1, maximum: 50, default: 4, description: 'Connections of the own pool (with url).' }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'log-postgres',
  kind: 'log',
  description: 'Usage events in a Postgres table with indexes for the logs and usage queries.',
  options: LogPostgresOptions,
  async register(relay, options) {
    const own = options.url ? poolDatabase(options.url, options.poolSize) : null;
    const backend = new PostgresUsageBackend({ db: own ?? relay.db, table: options.table, onClose: own ? () => own.close() : undefined });
    try {
      await backend.init();
    } catch (err) {
      // Relay still starts; events queue and retry until the database answers.
      relay.log.error({ err }, 'log-postgres: migrating the usage table failed; will retry on first use');
    }
    relay.hooks.addUsageBackend(backend);
  },
});
