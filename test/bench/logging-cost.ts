// `npm run bench:logging`: what usage logging to the file backend costs in throughput. Two Relays
// run on the gateway core, one with log-file loaded and one without (its events are built and
// dropped at the observer). By default they run at the same time, each under its own wrk
// (BENCH_MODE=paired): the cost is 1 minus the median of the per-round throughput ratios (see
// two-relays.ts). BENCH_MODE=alternate drives them one at a time instead. Prints the medians, the
// cost and CPU per request; writes .bench/logging-cost.json.
//   BENCH_ROUNDS (14)  BENCH_DURATION (3 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)  BENCH_MODE (paired)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, median, runBenchMain, runTwoRelays } from './two-relays.ts';

const env = process.env;
const cfg = {
  rounds: Number(env.BENCH_ROUNDS ?? 14),
  durationS: Number(env.BENCH_DURATION ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  caseId: env.BENCH_CASE ?? 'chat',
  mode: env.BENCH_MODE === 'alternate' ? 'alternate' as const : 'paired' as const,
  gatewayCpu: env.BENCH_GATEWAY_CPU ?? '0',
  loadCpu: env.BENCH_LOAD_CPU ?? '1',
};

runBenchMain('bench:logging', async () => {
  const workDir = join(BENCH_DIR, 'relay');
  const { benchCase, samples: [on, off], ratios } = await runTwoRelays({
    ...cfg,
    relays: [{ name: 'logging on', options: { workDir, usageLogging: true } }, { name: 'logging off', options: { workDir, usageLogging: false } }],
  });
  const rpsOn = median(on.map((s) => s.rps));
  const rpsOff = median(off.map((s) => s.rps));
  const cpuOn = median(on.map((s) => s.cpuUsPerReq));
  const cpuOff = median(off.map((s) => s.cpuUsPerReq));
  const cost = 1 - median(ratios);
  const how = cfg.mode === 'paired' ? 'rounds with both at once, sharing the core' : 'alternating rounds';
  process.stdout.write([
    `Usage logging to file, ${benchCase.id} at ${cfg.connections} connections, ${cfg.rounds} ${how}, of ${cfg.durationS} s (medians; cost = 1 - median of on/off per round)`,
    `  logging on   ${Math.round(rpsOn).toLocaleString('en-US')} req/s  ${cpuOn.toFixed(1)} us CPU per request`,
    `  logging off  ${Math.round(rpsOff).toLocaleString('en-US')} req/s  ${cpuOff.toFixed(1)} us CPU per request`,
    `  cost         ${(cost * 100).toFixed(1)}% of throughput, ${(cpuOn - cpuOff).toFixed(1)} us CPU per request (target: at most 5%)`,
  ].join('\n') + '\n');
  writeFileSync(join(BENCH_DIR, 'logging-cost.json'), JSON.stringify({
    date: new Date().toISOString(), ...cfg, rpsOn, rpsOff, cpuUsPerReqOn: cpuOn, cpuUsPerReqOff: cpuOff, cost, ratios, rounds: { on, off },
  }, null, 2));
});
