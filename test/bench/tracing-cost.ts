// `npm run bench:tracing`: what the otel plugin costs in throughput, tracing off beside tracing at
// 100% and at 1% in the same run. Like bench:logging (two-relays.ts): for each ratio, BENCH_PAIRS
// pairs of fresh Relay processes on the gateway core, one without the otel plugin and one with it
// exporting over OTLP/HTTP to a sink in this process (otlp-sink.ts: answers 200, decodes nothing),
// run BENCH_ROUNDS alternating rounds (BENCH_MODE=paired: side by side); the cost is 1 minus the median of the per-round
// throughput ratios. Prints each ratio's figures; writes .bench/tracing-cost.json.
//   BENCH_PAIRS (2)  BENCH_ROUNDS (6 per pair)  BENCH_DURATION (3 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)  BENCH_MODE (alternate)
//   BENCH_OTEL_RATIOS (1,0.01)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, median, modeFromEnv, roundsFromEnv, runBenchMain, runTwoRelays, type Sample } from './two-relays.ts';
import type { BenchCase } from './cases.ts';
import { describeIdleMode } from './idle-polling.ts';
import { startOtlpSink } from './otlp-sink.ts';

const env = process.env;
const cfg = {
  pairs: Number(env.BENCH_PAIRS ?? 2),
  ...roundsFromEnv(env, { rounds: 6, durationS: 3 }),
  caseId: env.BENCH_CASE ?? 'chat',
  mode: modeFromEnv(env),
  ratios: (env.BENCH_OTEL_RATIOS ?? '1,0.01').split(',').map(Number),
};

interface RatioResult {
  sampleRatio: number;
  rpsOn: number;
  rpsOff: number;
  cpuUsPerReqOn: number;
  cpuUsPerReqOff: number;
  cost: number;
  pairCosts: number[];
  exports: number;
  exportedBytes: number;
}

runBenchMain('bench:tracing', async (idle) => {
  const sink = await startOtlpSink();
  const workDir = join(BENCH_DIR, 'relay');
  const results: RatioResult[] = [];
  let benchCase: BenchCase | undefined;
  try {
    for (const sampleRatio of cfg.ratios) {
      const relayOn = { name: `tracing ${sampleRatio * 100}%`, options: { workDir, tracing: { sampleRatio, endpoint: sink.url } } };
      const relayOff = { name: 'tracing off', options: { workDir, tracing: null } };
      const on: Sample[] = [];
      const off: Sample[] = [];
      const ratios: number[] = [];
      const pairCosts: number[] = [];
      const [exportsBefore, bytesBefore] = [sink.exports, sink.bytes];
      for (let pair = 0; pair < cfg.pairs; pair++) {
        process.stderr.write(`${relayOn.name}: pair ${pair + 1} of ${cfg.pairs}\n`);
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
      results.push({
        sampleRatio, rpsOn: median(on.map((s) => s.rps)), rpsOff: median(off.map((s) => s.rps)),
        cpuUsPerReqOn: median(on.map((s) => s.cpuUsPerReq)), cpuUsPerReqOff: median(off.map((s) => s.cpuUsPerReq)),
        cost: 1 - median(ratios), pairCosts, exports: sink.exports - exportsBefore, exportedBytes: sink.bytes - bytesBefore,
      });
    }
  } finally {
    await sink.close();
  }
  const how = cfg.mode === 'paired' ? 'rounds with both at once, sharing the core' : 'alternating rounds';
  process.stdout.write([
    `Tracing (otel plugin, OTLP/HTTP to a sink), ${benchCase!.id} at ${cfg.connections} connections, ${cfg.pairs} pairs of processes x ${cfg.rounds} ${how}, of ${cfg.durationS} s, ${describeIdleMode(idle)} (medians; cost = 1 - median of on/off per round)`,
    ...results.flatMap((r) => [
      `  sampled ${`${r.sampleRatio * 100}%`.padEnd(5)} ${Math.round(r.rpsOn).toLocaleString('en-US')} req/s  ${r.cpuUsPerReqOn.toFixed(1)} us CPU per request   off: ${Math.round(r.rpsOff).toLocaleString('en-US')} req/s  ${r.cpuUsPerReqOff.toFixed(1)} us`,
      `           cost ${(r.cost * 100).toFixed(1)}% of throughput (pairs ${r.pairCosts.map((c) => `${(c * 100).toFixed(1)}%`).join(', ')}), ${(r.cpuUsPerReqOn - r.cpuUsPerReqOff).toFixed(1)} us CPU per request; ${r.exports} exports, ${r.exportedBytes.toLocaleString('en-US')} bytes`,
    ]),
  ].join('\n') + '\n');
  writeFileSync(join(BENCH_DIR, 'tracing-cost.json'), JSON.stringify({ date: new Date().toISOString(), ...cfg, idle: idle.mode, results }, null, 2));
});
