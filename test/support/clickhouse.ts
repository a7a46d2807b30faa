// ensureClickHouse(): a real ClickHouse for tests.
//
//  1. CLICKHOUSE_URL set: that server, over HTTP.
//  2. Else `chdb` from the test tools (test/tools, installed by `npm test`): a modern ClickHouse
//     engine in this process, plugged into @clickhouse/client through the client's `connection`
//     option (chdb/connection). The plugins' SQL, JSONEachRow inserts and query parameters run on
//     the real engine; only the HTTP hop is not exercised.
//  3. Else a skip, with what to install.
//
// Debian's clickhouse-server is 18.16 (2018): too old for DateTime64, Map, Bool and
// parameterised queries, so it is not a fallback.
import type { ClickHouseClient } from '@clickhouse/client';
import { createClient } from '@clickhouse/client';
import { importTestTool } from '../tools/paths.ts';

export interface TestClickHouse {
  kind: 'server' | 'chdb';
  /** One client; shared by the tests of a file (chdb runs one engine per process). */
  client: ClickHouseClient;
  close(): Promise<void>;
}

export type EnsureClickHouseResult = TestClickHouse | { skip: string };

/** What `chdb/connection` exports that this module uses (chdb is not among Relay's own dependencies). */
interface ChdbConnectionModule { createChdbConnection(o: { path: string }): unknown }

let chdb: Promise<TestClickHouse> | null = null;

export async function ensureClickHouse(): Promise<EnsureClickHouseResult> {
  const url = process.env.CLICKHOUSE_URL;
  if (url) {
    const client = createClient({ url, clickhouse_settings: { date_time_input_format: 'best_effort' } });
    const ping = await client.ping();
    if (!ping.success) return { skip: `CLICKHOUSE_URL=${url} does not answer: ${String(ping.error)}` };
    return { kind: 'server', client, close: () => client.close() };
  }
  try {
    chdb ??= (async () => {
      const { createChdbConnection } = await importTestTool<ChdbConnectionModule>('chdb/connection');
      const connection = createChdbConnection({ path: ':memory:' });
      const client = createClient({ connection, clickhouse_settings: { date_time_input_format: 'best_effort' } } as Parameters<typeof createClient>[0]);
      await client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json());
      return { kind: 'chdb' as const, client, close: async () => {} };
    })();
    return await chdb;
  } catch (err) {
    chdb = null;
    return { skip: `no ClickHouse: set CLICKHOUSE_URL, or install the test tools (npm run test:tools) (${(err as Error).message})` };
  }
}
