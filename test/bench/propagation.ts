// Prints how long a catalog write through one instance takes to reach another instance's
// snapshot (NOTIFY -> re-read -> new snapshot): median and p99 over 100 writes.
// Needs the Postgres server at RELAY_TEST_PG_URL (default postgres://root@127.0.0.1:5432/postgres).
import { createTestDatabase, startRelay } from '../../core/testing.ts';

const WRITES = Number(process.env.WRITES ?? 100);
const db = await createTestDatabase();
const a = await startRelay({ database: db.url, plugins: [] });
const b = await startRelay({ database: db.url, plugins: [] });
const times: number[] = [];
try {
  for (let i = 0; i < WRITES; i++) {
    const t0 = performance.now();
    const res = await a.api('POST', '/api/rate-limits', { metadata: { displayName: `bench ${i}` }, spec: { requestsPerMinute: i + 1 } });
    const id = res.body.metadata.id as string;
    // Poll tightly: the figure is the propagation time, not the polling interval.
    while (!b.relay.sync.snapshot().rateLimits.has(id)) await new Promise((r) => setImmediate(r));
    times.push(performance.now() - t0);
  }
} finally {
  await a.close();
  await b.close();
  await db.drop();
}
times.sort((x, y) => x - y);
const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(`catalog propagation over ${times.length} writes (write through instance A until visible in B's snapshot):`);
console.log(`  median ${q(0.5).toFixed(2)} ms   p99 ${q(0.99).toFixed(2)} ms   max ${times.at(-1)!.toFixed(2)} ms`);
