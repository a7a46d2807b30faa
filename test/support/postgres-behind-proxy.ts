// A fresh test database reached through a hanging proxy (hanging-proxy.ts), so that a test can
// make Postgres go silent mid-conversation; both are gone when the test file ends.
import type { Test } from 'tap';
import pg from 'pg';
import { createTestDatabase } from '../../core/testing.ts';
import { startHangingProxy, type HangingProxy } from './hanging-proxy.ts';

export interface PostgresBehindProxy {
  /** The database's own URL, for reads that must not go through the proxy. */
  directUrl: string;
  /** The same database through the proxy. */
  url: string;
  proxy: HangingProxy;
  /** The request ids a log table holds, read directly (not through the proxy), in order. */
  storedIds(table: string): Promise<string[]>;
}

export async function postgresBehindProxy(t: Pick<Test, 'teardown'>): Promise<PostgresBehindProxy> {
  const testDb = await createTestDatabase();
  const proxy = await startHangingProxy(5432);
  const viaProxy = new URL(testDb.url);
  viaProxy.port = String(proxy.port);
  t.teardown(async () => {
    proxy.dropHeld();
    await proxy.close();
    await testDb.drop();
  });
  const storedIds = async (table: string): Promise<string[]> => {
    const direct = new pg.Client({ connectionString: testDb.url });
    await direct.connect();
    try {
      return (await direct.query<{ request_id: string }>(`SELECT request_id FROM ${table} ORDER BY request_id`)).rows.map((r) => r.request_id);
    } finally {
      await direct.end();
    }
  };
  return { directUrl: testDb.url, url: viaProxy.toString(), proxy, storedIds };
}
