import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ClickHouseUsageBackend } from '../../plugins/log-clickhouse/clickhouse-usage-backend.ts';
import { usageBackendSuite } from '../support/usage-backend-suite.ts';
import { usageEvent } from '../support/observer-fixtures.ts';
import { ensureClickHouse } from '../support/clickhouse.ts';

const clickhouse = await ensureClickHouse();
if ('skip' in clickhouse) {
  t.plan(0, clickhouse.skip);
} else {
  const { client } = clickhouse;
  t.comment(`ClickHouse: ${clickhouse.kind}`);
  t.teardown(() => clickhouse.close());
  const uniqueTable = () => `usage_test_${randomBytes(4).toString('hex')}`;

  t.test('conformance', async (t) => {
    usageBackendSuite(t, async () => {
      const table = uniqueTable();
      const backend = new ClickHouseUsageBackend({ client, table, ttlDays: 30, ownsClient: false });
      return { backend, cleanup: async () => { await client.command({ query: `DROP TABLE IF EXISTS ${table}` }); } };
    });
  });

  t.test('the table: monthly partitions, sort key, TTL; a retried batch is not stored twice', async (t) => {
    const table = uniqueTable();
    t.teardown(() => client.command({ query: `DROP TABLE IF EXISTS ${table}` }));
    const backend = new ClickHouseUsageBackend({ client, table, ttlDays: 90, ownsClient: false });
    await backend.init();
    const ddl = await (await client.query({ query: `SHOW CREATE TABLE ${table}`, format: 'JSONEachRow' })).json<{ statement: string }>();
    t.match(ddl[0].statement, /PARTITION BY toYYYYMM\(started_at\)/);
    t.match(ddl[0].statement, /ORDER BY \(started_at, request_id\)/);
    t.match(ddl[0].statement, /TTL toDateTime\(started_at\) \+ toIntervalDay\(90\)/);
    const batch = Array.from({ length: 300 }, () => usageEvent());
    await backend.write(batch);
    await backend.write(batch);
    t.equal((await backend.summary({})).totals.requests, 300);
  });

  t.test('a table made before the request id columns gains them on start', async (t) => {
    const table = uniqueTable();
    t.teardown(() => client.command({ query: `DROP TABLE IF EXISTS ${table}` }));
    await new ClickHouseUsageBackend({ client, table, ttlDays: 0, ownsClient: false }).init();
    // Back to the first release's columns.
    await client.command({ query: `ALTER TABLE ${table} DROP COLUMN client_request_id, DROP COLUMN upstream_request_id` });
    const backend = new ClickHouseUsageBackend({ client, table, ttlDays: 0, ownsClient: false });
    await backend.init();
    const event = usageEvent({ client_request_id: 'client-9', upstream_request_id: 'req_up_9' });
    await backend.write([event]);
    t.same(await backend.get!(event.request_id), event, 'written and read back with both ids');
  });
}
