// `npm run bench:logging`: what usage logging to the file backend costs in throughput. Two Relays
// run on the gateway core, one with log-file loaded and one without (its events are built and
// dropped at the observer). By default they run at the same time, each under its own wrk
// (BENCH_MODE=paired): sharing the core, each gets about half of it, so the ratio of their
// throughputs is the inverse ratio of their CPU per request under the same conditions, and the
// cost is the median of the per-round ratios. BENCH_MODE=alternate drives them one at a time in
// alternating rounds (on, off, off, on, ...) instead. Prints the medians, the cost and CPU per
// request; writes .bench/logging-cost.json.
//   BENCH_ROUNDS (14)  BENCH_DURATION (3 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)  BENCH_MODE (paired)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CASES } from './cases.ts';
import { runWrk } from './wrk.ts';
import { sampleProc } from './proc.ts';
import { startRelayForBench, type RelayBenchHandle } from './relay-target.ts';
import { relayTarget, probe, type RoutedRequest } from './targets.ts';
import { killAllChildren, pinSelf, readLine, spawnPinned, stopChild } from './processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BENCH_DIR = join(ROOT, '.bench');
const env = process.env;
const cfg = {
  rounds: Number(env.BENCH_ROUNDS ?? 14),
  mode: env.BENCH_MODE === 'alternate' ? 'alternate' as const : 'paired' as const,
  durationS: Number(env.BENCH_DURATION ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  caseId: env.BENCH_CASE ?? 'chat',
  gatewayCpu: env.BENCH_GATEWAY_CPU ?? '0',
  loadCpu: env.BENCH_LOAD_CPU ?? '1',
};

interface Sample { rps: number; cpuUsPerReq: number }

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function measure(h: RelayBenchHandle, routed: RoutedRequest, durationS: number): Promise<Sample> {
  const before = sampleProc(h.pid);
  const r = await runWrk(routed, { connections: cfg.connections, durationS, cpu: cfg.loadCpu }, join(BENCH_DIR, 'wrk'));
  const after = sampleProc(h.pid);
  const errors = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
  if (errors > 0) throw new Error(`${errors} errors during a round`);
  return { rps: r.rps, cpuUsPerReq: (after.cpuUs - before.cpuUs) / r.requests };
}

async function main(): Promise<void> {
  const benchCase = CASES.find((c) => c.id === cfg.caseId);
  if (!benchCase) throw new Error(`BENCH_CASE ${cfg.caseId} is not one of ${CASES.map((c) => c.id).join(', ')}`);
  mkdirSync(BENCH_DIR, { recursive: true });
  pinSelf(cfg.loadCpu);
  const upstream = spawnPinned(cfg.loadCpu, process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/upstream-process.ts')], { cwd: ROOT });
  const relays: RelayBenchHandle[] = [];
  try {
    const upstreamUrl = await readLine(upstream, 'READY ');
    const on = await startRelayForBench(upstreamUrl, { cpu: cfg.gatewayCpu, workDir: join(BENCH_DIR, 'relay'), usageLogging: true });
    relays.push(on);
    const off = await startRelayForBench(upstreamUrl, { cpu: cfg.gatewayCpu, workDir: join(BENCH_DIR, 'relay'), usageLogging: false });
    relays.push(off);
    const sides = [
      { name: 'logging on', handle: on, routed: relayTarget(on).route(benchCase) as RoutedRequest, samples: [] as Sample[] },
      { name: 'logging off', handle: off, routed: relayTarget(off).route(benchCase) as RoutedRequest, samples: [] as Sample[] },
    ];
    for (const side of sides) {
      for (let tries = 0; ; tries++) {
        const bad = await probe(side.routed);
        if (!bad) break;
        if (tries > 20) throw new Error(`${side.name}: ${bad}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      await measure(side.handle, side.routed, 2); // warm-up, not counted
    }
    const ratios: number[] = [];
    for (let round = 0; round < cfg.rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const samples = cfg.mode === 'paired'
        ? await Promise.all(order.map((side) => measure(side.handle, side.routed, cfg.durationS)))
        : await order.reduce(async (done, side) => [...(await done), await measure(side.handle, side.routed, cfg.durationS)], Promise.resolve([] as Sample[]));
      order.forEach((side, i) => {
        side.samples.push(samples[i]);
        process.stderr.write(`  round ${round + 1} ${side.name.padEnd(11)} ${Math.round(samples[i].rps)} req/s  ${Math.round(samples[i].cpuUsPerReq)} us/req\n`);
      });
      ratios.push(sides[0].samples[round].rps / sides[1].samples[round].rps);
    }
    const [onSide, offSide] = sides;
    const rpsOn = median(onSide.samples.map((s) => s.rps));
    const rpsOff = median(offSide.samples.map((s) => s.rps));
    const cpuOn = median(onSide.samples.map((s) => s.cpuUsPerReq));
    const cpuOff = median(offSide.samples.map((s) => s.cpuUsPerReq));
    const cost = 1 - median(ratios);
    const how = cfg.mode === 'paired' ? 'rounds with both at once, sharing the core' : 'alternating rounds';
    const lines = [
      `Usage logging to file, ${benchCase.id} at ${cfg.connections} connections, ${cfg.rounds} ${how}, of ${cfg.durationS} s (medians; cost = 1 - median of on/off per round)`,
      `  logging on   ${Math.round(rpsOn).toLocaleString('en-US')} req/s  ${cpuOn.toFixed(1)} us CPU per request`,
      `  logging off  ${Math.round(rpsOff).toLocaleString('en-US')} req/s  ${cpuOff.toFixed(1)} us CPU per request`,
      `  cost         ${(cost * 100).toFixed(1)}% of throughput, ${(cpuOn - cpuOff).toFixed(1)} us CPU per request (target: at most 5%)`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    writeFileSync(join(BENCH_DIR, 'logging-cost.json'), JSON.stringify({
      date: new Date().toISOString(), ...cfg, rpsOn, rpsOff, cpuUsPerReqOn: cpuOn, cpuUsPerReqOff: cpuOff, cost, ratios,
      rounds: { on: onSide.samples, off: offSide.samples },
    }, null, 2));
  } finally {
    for (const h of relays) await h.stop();
    await stopChild(upstream);
  }
}

process.on('SIGINT', () => { killAllChildren(); process.exit(130); });
main().catch((err: unknown) => {
  process.stderr.write(`bench:logging failed: ${(err as Error).stack ?? String(err)}\n`);
  killAllChildren();
  process.exit(1);
});
