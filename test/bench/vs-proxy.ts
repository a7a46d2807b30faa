// `npm run bench:vs-proxy`: Relay and the bare Node proxy (node-proxy.ts) alone on the gateway core
// in turn, in short alternating rounds (two-relays.ts, alternate mode: relay, proxy, proxy, relay,
// ...). The drift that moves this machine's sequential runs by up to 2x over minutes falls on both
// alike, so the median of the per-round throughput ratios is `npm run bench`'s "Relay ÷ bare proxy"
// without it. Not paired (both at once, as bench:compare runs two builds): two gateways at once
// double the load on the other core's wrk and fake upstream, and the streamed cases then cost each
// gateway 2-3.4x its CPU a request alone, the two not alike (test/bench/RESULTS.md).
// Passthrough cases only (the bare proxy does not translate). Prints, per case, the medians, the
// ratio and each round's, and writes .bench/vs-proxy.json.
//   BENCH_CASES (chat,chat-stream,messages-stream,agent-turn-stream)  BENCH_ROUNDS (8)
//   BENCH_DURATION (3 s)  BENCH_CONNECTIONS (16)  BENCH_WARMUP (6 s of load on each first)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, median, modeFromEnv, roundsFromEnv, runBenchMain, runTwoRelays, type Sample } from './two-relays.ts';

const env = process.env;
const cfg = {
  cases: (env.BENCH_CASES ?? 'chat,chat-stream,messages-stream,agent-turn-stream').split(',').filter(Boolean),
  ...roundsFromEnv(env, { rounds: 8, durationS: 3 }),
};
if (modeFromEnv(env) === 'paired') throw new Error('bench:vs-proxy alternates only: two gateways at once load the other core\'s wrk and upstream twice over (see the header)');

runBenchMain('bench:vs-proxy', async (idle) => {
  const results = [];
  const lines = [`Relay and the bare Node proxy alone on one core in alternating rounds, ${cfg.connections} connections, ${cfg.rounds} rounds of ${cfg.durationS} s each (medians)`];
  for (const caseId of cfg.cases) {
    const { samples: [relay, proxy], ratios } = await runTwoRelays({
      ...cfg,
      caseId,
      mode: 'alternate',
      relays: [
        { name: 'relay', options: { workDir: join(BENCH_DIR, 'vs-proxy-relay') } },
        { name: 'bare proxy', bareProxy: true },
      ],
    });
    const rps = (side: Sample[]) => Math.round(median(side.map((s) => s.rps))).toLocaleString('en-US');
    const cpu = (side: Sample[]) => median(side.map((s) => s.cpuUsPerReq)).toFixed(0);
    const ratio = median(ratios);
    lines.push(`  ${caseId.padEnd(18)} bare proxy ${rps(proxy)} req/s (${cpu(proxy)} us CPU a request), Relay ${rps(relay)} req/s (${cpu(relay)} us): Relay ÷ bare proxy ${(ratio * 100).toFixed(0)}% (rounds: ${ratios.map((r) => (100 * r).toFixed(0)).join(' ')})`);
    results.push({ caseId, ratio, ratios, relay, proxy });
  }
  process.stdout.write(lines.join('\n') + '\n');
  writeFileSync(join(BENCH_DIR, 'vs-proxy.json'), JSON.stringify({ date: new Date().toISOString(), ...cfg, idle: idle.mode, results }, null, 2));
});
