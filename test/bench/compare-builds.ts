// `npm run bench:compare`: two builds of Relay (another checkout's and this one) on the gateway
// core at the same time, each driven by its own wrk at the same connection count, round after
// round. Sharing the core, each gets about half of it, so the ratio of their throughputs is the
// inverse ratio of their CPU per request, measured under the same machine conditions; the drift
// that makes sequential runs on this machine vary by ±15% falls on both alike. Prints the medians
// and the median of the per-round ratios (paired), and writes .bench/compare.json.
//   BENCH_BASE=/path/to/other/checkout/bin/relay.js (required; that checkout needs its dist/ built)
//   BENCH_ROUNDS (12)  BENCH_DURATION (2 s)  BENCH_CONNECTIONS (16)  BENCH_CASE (chat)
// Calibration on the development machine: the same build against itself gave ratios of 0.96-1.00,
// so read differences under about 4% as noise.
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
  base: env.BENCH_BASE ?? '',
  rounds: Number(env.BENCH_ROUNDS ?? 12),
  durationS: Number(env.BENCH_DURATION ?? 2),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  caseId: env.BENCH_CASE ?? 'chat',
  gatewayCpu: env.BENCH_GATEWAY_CPU ?? '0',
  loadCpu: env.BENCH_LOAD_CPU ?? '1',
};

interface Sample { rps: number; cpuUsPerReq: number }
interface Side { name: string; handle: RelayBenchHandle; routed: RoutedRequest; samples: Sample[] }

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function measure(side: Side, durationS: number): Promise<Sample> {
  const before = sampleProc(side.handle.pid);
  const r = await runWrk(side.routed, { connections: cfg.connections, durationS, cpu: cfg.loadCpu }, join(BENCH_DIR, 'wrk'));
  const after = sampleProc(side.handle.pid);
  const errors = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
  if (errors > 0) throw new Error(`${side.name}: ${errors} errors during a round`);
  return { rps: r.rps, cpuUsPerReq: (after.cpuUs - before.cpuUs) / r.requests };
}

async function main(): Promise<void> {
  if (!cfg.base) throw new Error('set BENCH_BASE to the other checkout\'s bin/relay.js (its dist/ built with npm run build:server)');
  const benchCase = CASES.find((c) => c.id === cfg.caseId);
  if (!benchCase) throw new Error(`BENCH_CASE ${cfg.caseId} is not one of ${CASES.map((c) => c.id).join(', ')}`);
  mkdirSync(BENCH_DIR, { recursive: true });
  pinSelf(cfg.loadCpu);
  const upstream = spawnPinned(cfg.loadCpu, process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/upstream-process.ts')], { cwd: ROOT });
  const handles: RelayBenchHandle[] = [];
  try {
    const upstreamUrl = await readLine(upstream, 'READY ');
    const base = await startRelayForBench(upstreamUrl, { cpu: cfg.gatewayCpu, workDir: join(BENCH_DIR, 'compare-base'), entry: resolve(cfg.base) });
    handles.push(base);
    const current = await startRelayForBench(upstreamUrl, { cpu: cfg.gatewayCpu, workDir: join(BENCH_DIR, 'compare-current') });
    handles.push(current);
    const sides: Side[] = [['base', base], ['current', current]].map(([name, handle]) => ({
      name: name as string, handle: handle as RelayBenchHandle, routed: relayTarget(handle as RelayBenchHandle).route(benchCase) as RoutedRequest, samples: [],
    }));
    for (const side of sides) {
      for (let tries = 0; ; tries++) {
        const bad = await probe(side.routed);
        if (!bad) break;
        if (tries > 20) throw new Error(`${side.name}: ${bad}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    await Promise.all(sides.map((side) => measure(side, 2))); // warm-up, not counted
    const ratios: number[] = [];
    for (let round = 0; round < cfg.rounds; round++) {
      const [b, c] = await Promise.all(sides.map((side) => measure(side, cfg.durationS)));
      sides[0]!.samples.push(b!);
      sides[1]!.samples.push(c!);
      ratios.push(c!.rps / b!.rps);
      process.stderr.write(`  round ${round + 1}  base ${Math.round(b!.rps)} req/s ${Math.round(b!.cpuUsPerReq)} us/req  current ${Math.round(c!.rps)} req/s ${Math.round(c!.cpuUsPerReq)} us/req\n`);
    }
    const ratio = median(ratios);
    const line = (side: Side) => `  ${side.name.padEnd(8)} ${Math.round(median(side.samples.map((s) => s.rps))).toLocaleString('en-US')} req/s  ${median(side.samples.map((s) => s.cpuUsPerReq)).toFixed(1)} us CPU per request (sharing the core)`;
    process.stdout.write([
      `Two builds side by side, ${benchCase.id} at ${cfg.connections} connections each, ${cfg.rounds} rounds of ${cfg.durationS} s (medians)`,
      line(sides[0]!),
      line(sides[1]!),
      `  current / base throughput, paired by round: ${ratio.toFixed(3)} (${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%)`,
    ].join('\n') + '\n');
    writeFileSync(join(BENCH_DIR, 'compare.json'), JSON.stringify({
      date: new Date().toISOString(), ...cfg, ratio, rounds: { base: sides[0]!.samples, current: sides[1]!.samples, ratios },
    }, null, 2));
  } finally {
    for (const h of handles) await h.stop();
    await stopChild(upstream);
  }
}

process.on('SIGINT', () => { killAllChildren(); process.exit(130); });
main().catch((err: unknown) => {
  process.stderr.write(`bench:compare failed: ${(err as Error).stack ?? String(err)}\n`);
  killAllChildren();
  process.exit(1);
});
