// The bench's latency figures are what the requests took: wrk corrects its histogram for
// coordinated omission (a sample added at every mean interval below each slow request), and the
// bench's wrk script takes those samples out again. Against a real server that answers at once
// but for one request in 500, held 20 ms.
import t from 'tap';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWrk, wrkVersion } from './wrk.ts';

t.test('per-request latencies, with the samples wrk added for coordinated omission taken out', async (t) => {
  t.ok(await wrkVersion(), 'wrk is installed (.ci/run installs it)');
  const STALL_EVERY = 500;
  const STALL_MS = 20;
  let answered = 0;
  let stalls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answered++;
      if (answered % STALL_EVERY !== 0) return void res.end('{"ok":true}');
      stalls++;
      setTimeout(() => res.end('{"ok":true}'), STALL_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const scripts = mkdtempSync(join(tmpdir(), 'relay-wrk-'));
  t.teardown(() => {
    server.close();
    rmSync(scripts, { recursive: true, force: true });
  });
  const { port } = server.address() as { port: number };
  const r = await runWrk({ url: `http://127.0.0.1:${port}/`, headers: { 'content-type': 'application/json' }, body: '{}' },
    { connections: 1, durationS: 2 }, scripts);

  t.ok(stalls >= 2, `the server held ${stalls} of ${answered} requests`);
  t.equal(r.latencyPerRequest, true, 'the histogram was read back');
  t.equal(r.latencySamples, r.requests, 'one sample per request: every added sample taken out, none of the real ones');
  t.ok(r.latency.max >= STALL_MS * 1000 && r.latency.max === r.latencyCorrected.max, `the slowest request is there: ${r.latency.max} us`);
  const stalledShare = stalls / r.requests;
  t.ok(stalledShare < 0.005, `held requests are under half a percent (${(stalledShare * 100).toFixed(3)}%)`);
  t.ok(r.latency.p99 < STALL_MS * 1000, `so the p99 of what requests took is not a stall: ${r.latency.p99} us`);
  t.ok(r.latencyCorrected.p99 >= (STALL_MS * 1000) / 4, `while wrk's corrected p99 is: ${r.latencyCorrected.p99} us`);
  t.ok(r.latency.mean < r.latencyCorrected.mean, 'and the mean of what requests took is below wrk\'s corrected mean');
});
