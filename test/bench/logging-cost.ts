// `npm run bench:logging`: what usage logging to the file backend costs in throughput. Two Relays
// run on the gateway core, one with log-file loaded and one without (its events are built and
// dropped at the observer). By default they run one at a time in alternating rounds: the cost is
// 1 minus the median of the per-round throughput ratios (see two-relays.ts). BENCH_MODE=paired
// drives both at once, each under its own wrk, which misses the collector's helper threads
// (compare-builds.ts). Each of BENCH_PAIRS
// pairs of fresh processes (started in alternating order) runs BENCH_ROUNDS rounds: a single pair
// carries its two processes' own luck (their CPU per request moved by up to ±4% against each
// other; one pair gave 5.4 us of cost and the next 27.6), which more pairs average out. Prints the
// medians, each pair's cost, the cost over all rounds and CPU per request; writes
// .bench/logging-cost.json.
//   BENCH_PAIRS (3)  BENCH_ROUNDS (6 per pair)  BENCH_DURATION (3 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)  BENCH_MODE (alternate)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, median, modeFromEnv, roundsFromEnv, runBenchMain, runTwoRelays, type Sample } from './two-relays.ts';
import type { BenchCase } from './cases.ts';
import { describeIdleMode } from './idle-polling.ts';

const env = process.env;
const cfg = {
  pairs: Number(env.BENCH_PAIRS ?? 3),
  ...roundsFromEnv(env, { rounds: 6, durationS: 3 }),
  caseId: env.BENCH_CASE ?? 'chat',
  mode: modeFromEnv(env),
};

runBenchMain('bench:logging', async (idle) => {
  const workDir = join(BENCH_DIR, 'relay');
  const relayOn = { name: 'logging on', options: { workDir, usageLogging: true } };
  const relayOff = { name: 'logging off', options: { workDir, usageLogging: false } };
  const on: Sample[] = [];
  const off: Sample[] = [];
  const ratios: number[] = [];
  const pairCosts: number[] = [];
  let benchCase: BenchCase | undefined;
  for (let pair = 0; pair < cfg.pairs; pair++) {
    process.stderr.write(`pair ${pair + 1} of ${cfg.pairs}\n`);
    // Every other pair starts the Relay without logging first.
    const offFirst = pair % 2 === 1;
    const run = await runTwoRelays({ ...cfg, relays: offFirst ? [relayOff, relayOn] : [relayOn, relayOff] });
    benchCase = run.benchCase;
    const [pairOn, pairOff] = offFirst ? [run.samples[1], run.samples[0]] : run.samples;
    const pairRatios = offFirst ? run.ratios.map((r) => 1 / r) : run.ratios;
    on.push(...pairOn);
    off.push(...pairOff);
    ratios.push(...pairRatios);
    pairCosts.push(1 - median(pairRatios));
  }
  const rpsOn = median(on.map((s) => s.rps));
  const rpsOff = median(off.map((s) => s.rps));
  const cpuOn = median(on.map((s) => s.cpuUsPerReq));
  const cpuOff = median(off.map((s) => s.cpuUsPerReq));
  const cost = 1 - median(ratios);
  const how = cfg.mode === 'paired' ? 'rounds with both at once, sharing the core' : 'alternating rounds';
  process.stdout.write([
    `Usage logging to file, ${benchCase!.id} at ${cfg.connections} connections, ${cfg.pairs} pairs of processes x ${cfg.rounds} ${how}, of ${cfg.durationS} s, ${describeIdleMode(idle)} (medians; cost = 1 - median of on/off per round)`,
    `  logging on   ${Math.round(rpsOn).toLocaleString('en-US')} req/s  ${cpuOn.toFixed(1)} us CPU per request`,
    `  logging off  ${Math.round(rpsOff).toLocaleString('en-US')} req/s  ${cpuOff.toFixed(1)} us CPU per request`,
    `  each pair    ${pairCosts.map((c) => `${(c * 100).toFixed(1)}%`).join(', ')}`,
    `  cost         ${(cost * 100).toFixed(1)}% of throughput over all ${ratios.length} rounds, ${(cpuOn - cpuOff).toFixed(1)} us CPU per request (target: at most 5%)`,
  ].join('\n') + '\n');
  writeFileSync(join(BENCH_DIR, 'logging-cost.json'), JSON.stringify({
    date: new Date().toISOString(), ...cfg, idle: idle.mode, rpsOn, rpsOff, cpuUsPerReqOn: cpuOn, cpuUsPerReqOff: cpuOff, cost, pairCosts, ratios, rounds: { on, off },
  }, null, 2));
});
