// Two Relays on the gateway core, measured round after round on one case: the engine of
// `bench:logging` (with and without a usage backend), `bench:compare` (two builds) and
// `bench:vs-proxy` (Relay beside the bare Node proxy, node-proxy.ts, on a passthrough case). In
// `alternate` mode (every script's default) they run one at a time (A, B, B, A, ...), so the
// machine's drift falls on both alike. In `paired` mode each round drives both at once, each under
// its own wrk, sharing the core; the kernel shares it per thread, so a side whose collector keeps
// more helper threads busy gets more of it, and paired ratios understate such work (RESULTS.md).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CASES, type BenchCase } from './cases.ts';
import { runWrk } from './wrk.ts';
import { sampleProc } from './proc.ts';
import { startRelayForBench, type RelayBenchOptions } from './relay-target.ts';
import { nodeProxyTarget, relayTarget, probe, type RoutedRequest, type Target } from './targets.ts';
import { killAllChildren, pinSelf, readLine, spawnPinned, stopChild } from './processes.ts';
import { describeIdleMode, holdIdleMode, idleModeFromEnv, type IdleHold } from './idle-polling.ts';
import type { RoundsMode } from './bench-env.ts';

export { modeFromEnv, roundsFromEnv } from './bench-env.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BENCH_DIR = join(ROOT, '.bench');

export interface Sample { rps: number; cpuUsPerReq: number }

export interface TwoRelaysOptions {
  caseId: string;
  connections: number;
  durationS: number;
  rounds: number;
  /** Seconds of load on both before the first round (JIT and heap warming; default 6). */
  warmupS?: number;
  mode: RoundsMode;
  gatewayCpu: string;
  loadCpu: string;
  /** The two Relays (or a Relay and the bare proxy), first and second (the ratios are first / second). */
  relays: [SideSpec, SideSpec];
}

export interface RelaySpec {
  name: string;
  options: Omit<RelayBenchOptions, 'cpu'>;
}

/** The bare Node proxy (node-proxy.ts) as one side: passthrough cases only. */
export interface BareProxySpec {
  name: string;
  bareProxy: true;
}

export type SideSpec = RelaySpec | BareProxySpec;

interface Side {
  name: string;
  pid: number;
  routed: RoutedRequest;
  stop(): Promise<void>;
}

/** Starts one side on `cpu`, forwarding to the fake upstream, routed for `benchCase`. */
async function startSide(spec: SideSpec, upstreamUrl: string, cpu: string, benchCase: BenchCase): Promise<Side> {
  let target: Target;
  if ('bareProxy' in spec) {
    const proxy = spawnPinned(cpu, process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/node-proxy.ts'), '--upstream', upstreamUrl], { cwd: ROOT });
    target = nodeProxyTarget(await readLine(proxy, 'READY '), proxy.pid!, () => stopChild(proxy));
  } else {
    target = relayTarget(await startRelayForBench(upstreamUrl, { ...spec.options, cpu }));
  }
  const routed = target.route(benchCase);
  if ('unsupported' in routed) {
    await target.stop();
    throw new Error(`${spec.name}: ${benchCase.id}: ${routed.unsupported}`);
  }
  return { name: spec.name, pid: target.pid!, routed, stop: target.stop };
}

export interface TwoRelaysResult {
  benchCase: BenchCase;
  samples: [Sample[], Sample[]];
  /** Per round: the first Relay's req/s over the second's. */
  ratios: number[];
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function runTwoRelays(o: TwoRelaysOptions): Promise<TwoRelaysResult> {
  const benchCase = CASES.find((c) => c.id === o.caseId);
  if (!benchCase) throw new Error(`BENCH_CASE ${o.caseId} is not one of ${CASES.map((c) => c.id).join(', ')}`);
  mkdirSync(BENCH_DIR, { recursive: true });
  pinSelf(o.loadCpu);
  const upstream = spawnPinned(o.loadCpu, process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/upstream-process.ts')], { cwd: ROOT });
  const sides: Side[] = [];
  try {
    const upstreamUrl = await readLine(upstream, 'READY ');
    for (const spec of o.relays) sides.push(await startSide(spec, upstreamUrl, o.gatewayCpu, benchCase));

    const measure = async (side: Side, durationS: number): Promise<Sample> => {
      const before = sampleProc(side.pid);
      const r = await runWrk(side.routed, { connections: o.connections, durationS, cpu: o.loadCpu }, join(BENCH_DIR, 'wrk'));
      const after = sampleProc(side.pid);
      const errors = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
      if (errors > 0) throw new Error(`${side.name}: ${errors} errors during a round`);
      return { rps: r.rps, cpuUsPerReq: (after.cpuUs - before.cpuUs) / r.requests };
    };
    const runRound = async (order: Side[], durationS: number): Promise<Sample[]> => {
      if (o.mode === 'paired') return Promise.all(order.map((side) => measure(side, durationS)));
      const out: Sample[] = [];
      for (const side of order) out.push(await measure(side, durationS));
      return out;
    };

    for (const side of sides) {
      for (let tries = 0; ; tries++) {
        const bad = await probe(side.routed);
        if (!bad) break;
        if (tries > 20) throw new Error(`${side.name}: ${bad}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    // Warm-up, not counted: a fresh Relay's first seconds under load run at a fraction of its speed.
    await runRound(sides, o.warmupS ?? 6);

    const samples: [Sample[], Sample[]] = [[], []];
    const ratios: number[] = [];
    for (let round = 0; round < o.rounds; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const measured = await runRound(order, o.durationS);
      order.forEach((side, i) => {
        samples[sides.indexOf(side)]!.push(measured[i]!);
        process.stderr.write(`  round ${round + 1} ${side.name.padEnd(11)} ${Math.round(measured[i]!.rps)} req/s  ${Math.round(measured[i]!.cpuUsPerReq)} us/req\n`);
      });
      ratios.push(samples[0][round]!.rps / samples[1][round]!.rps);
    }
    return { benchCase, samples, ratios };
  } finally {
    for (const side of sides) await side.stop();
    await stopChild(upstream);
  }
}

/**
 * Runs a bench script's main: children are killed on Ctrl-C and on failure, and idle CPUs do what
 * BENCH_IDLE asks (idle-polling.ts; polling by default) for as long as it runs.
 */
export function runBenchMain(name: string, main: (idle: IdleHold) => Promise<void>): void {
  process.on('SIGINT', () => {
    killAllChildren();
    process.exit(130);
  });
  const idle = holdIdleMode(idleModeFromEnv(process.env.BENCH_IDLE));
  process.stderr.write(`${name}: ${describeIdleMode(idle)}\n`);
  main(idle).then(() => idle.release(), (err: unknown) => {
    process.stderr.write(`${name} failed: ${(err as Error).stack ?? String(err)}\n`);
    killAllChildren();
    process.exit(1);
  });
}
