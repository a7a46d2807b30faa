import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ClickHousePayloadBackend } from '../../plugins/payload-clickhouse/clickhouse-payload-backend.ts';
import { payloadBackendSuite } from '../support/payload-backend-suite.ts';
import { ensureClickHouse } from '../support/clickhouse.ts';

const clickhouse = await ensureClickHouse();
if ('skip' in clickhouse) {
  t.plan(0, clickhouse.skip);
} else {
  const { client } = clickhouse;
  t.comment(`ClickHouse: ${clickhouse.kind}`);
  t.teardown(() => clickhouse.close());
  t.test('conformance', async (t) => {
    payloadBackendSuite(t, async () => {
      const table = `payload_test_${randomBytes(4).toString('hex')}`;
      const backend = new ClickHousePayloadBackend({ client, table, ttlDays: 30, ownsClient: false });
      return { backend, cleanup: async () => { await client.command({ query: `DROP TABLE IF EXISTS ${table}` }); } };
    });
  });
}
