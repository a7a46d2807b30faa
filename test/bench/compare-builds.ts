// `npm run bench:compare`: two builds of Relay (another checkout's and this one) on the gateway
// core, driven by wrk at the same connection count, in alternating rounds (base, current,
// current, base, ...: the drift that makes sequential runs on this machine vary by ±15% falls on
// both alike). Prints the medians and the median of the per-round throughput ratios, and writes
// .bench/compare.json.
//   BENCH_BASE=/path/to/other/checkout/bin/relay.js (required; that checkout needs its dist/ built)
//   BENCH_ROUNDS (12)  BENCH_DURATION (2 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)
//   BENCH_WARMUP (6 s of load on both first, not counted)
//   BENCH_MODE (alternate; paired drives both at once, each under its own wrk, sharing the core)
//   BENCH_BASE_NODE_ARGS, BENCH_CURRENT_NODE_ARGS: node flags for each (default BENCH_RELAY_NODE_ARGS);
//   with BENCH_BASE=bin/relay.js they compare one build under two sets of flags.
// Paired rounds miss what a build spends on V8's helper threads: the kernel shares a core between
// threads, not processes, so the build with the busier collector gets more of it (RESULTS.md).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BENCH_DIR, median, modeFromEnv, roundsFromEnv, runBenchMain, runTwoRelays, type Sample } from './two-relays.ts';
import { splitArgs } from './relay-target.ts';

const env = process.env;
const cfg = {
  base: env.BENCH_BASE ?? '',
  ...roundsFromEnv(env, { rounds: 12, durationS: 2 }),
  caseId: env.BENCH_CASE ?? 'chat',
  mode: modeFromEnv(env),
  baseNodeArgs: splitArgs(env.BENCH_BASE_NODE_ARGS ?? env.BENCH_RELAY_NODE_ARGS),
  currentNodeArgs: splitArgs(env.BENCH_CURRENT_NODE_ARGS ?? env.BENCH_RELAY_NODE_ARGS),
};

runBenchMain('bench:compare', async (idle) => {
  if (!cfg.base) throw new Error('set BENCH_BASE to the other checkout\'s bin/relay.js (its dist/ built with npm run build)');
  const { benchCase, samples: [current, base], ratios } = await runTwoRelays({
    ...cfg,
    relays: [
      { name: 'current', options: { workDir: join(BENCH_DIR, 'compare-current'), nodeArgs: cfg.currentNodeArgs } },
      { name: 'base', options: { workDir: join(BENCH_DIR, 'compare-base'), entry: resolve(cfg.base), nodeArgs: cfg.baseNodeArgs } },
    ],
  });
  const ratio = median(ratios);
  const line = (name: string, samples: Sample[]) =>
    `  ${name.padEnd(8)} ${Math.round(median(samples.map((s) => s.rps))).toLocaleString('en-US')} req/s  ${median(samples.map((s) => s.cpuUsPerReq)).toFixed(1)} us CPU per request${cfg.mode === 'paired' ? ' (sharing the core)' : ''}`;
  process.stdout.write([
    `Two builds, ${benchCase.id} at ${cfg.connections} connections, ${cfg.rounds} ${cfg.mode === 'paired' ? 'rounds with both at once' : 'alternating rounds'} of ${cfg.durationS} s (medians)`,
    line('base', base),
    line('current', current),
    `  current / base throughput, round by round: ${ratio.toFixed(3)} (${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%)`,
  ].join('\n') + '\n');
  writeFileSync(join(BENCH_DIR, 'compare.json'), JSON.stringify({ date: new Date().toISOString(), ...cfg, idle: idle.mode, ratio, ratios, rounds: { base, current } }, null, 2));
});
