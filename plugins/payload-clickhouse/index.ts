// payload-clickhouse: captured payloads in a ClickHouse table.
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { clickHouseClient } from './client.ts';
import { ClickHousePayloadBackend } from './clickhouse-payload-backend.ts';

export const PayloadClickHouseOptions = Type.Object({
  url: Type.String({ default: 'http://127.0.0.1:8123' }),
  database: Type.String({ default: 'default', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
  username: Type.Optional(Type.String()),
  passwordEnv: Type.Optional(Type.String({ description: 'Name of the environment variable holding the password.' })),
  table: Type.String({ default: 'relay_payloads', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
  ttlDays: Type.Integer({ minimum: 0, default: 30, description: 'Payloads older than this many days are removed by ClickHouse; 0 keeps them.' }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'payload-clickhouse',
  kind: 'payload',
  description: 'Captured payloads in ClickHouse, compressed, looked up by request id.',
  options: PayloadClickHouseOptions,
  backends: () => ({ payload: ['clickhouse'] }),
  async register(relay, options) {
    const backend = new ClickHousePayloadBackend({ client: clickHouseClient(options, relay.log), table: options.table, ttlDays: options.ttlDays, ownsClient: true });
    try {
      await backend.init();
    } catch (err) {
      relay.log.error({ err }, 'payload-clickhouse: creating the payload table failed; will retry on first use');
    }
    relay.hooks.addPayloadBackend(backend);
  },
});
