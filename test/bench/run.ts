// `npm run bench`: Relay, Portkey and no gateway at all, side by side, against the same fake
// upstream. The gateway under test runs alone on one core (BENCH_GATEWAY_CPU, default 0); wrk, the
// fake upstream and this script share the other (BENCH_LOAD_CPU, default 1). See README.md beside
// this file for the columns and the knobs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import os from 'node:os';
import { CASES, type BenchCase } from './cases.ts';
import { runWrk, wrkVersion, type WrkResult } from './wrk.ts';
import { sampleProc, alive, type ProcSample } from './proc.ts';
import { measureTtfb, type TtfbResult } from './ttfb.ts';
import { installPortkey, startPortkey } from './portkey.ts';
import { splitArgs, startRelayForBench } from './relay-target.ts';
import { startOtlpSink } from './otlp-sink.ts';
import {
  directTarget,
  nodeProxyTarget,
  portkeyTarget,
  relayTarget,
  probe,
  TARGET_ORDER,
  type Target,
  type TargetName,
  type RoutedRequest,
} from './targets.ts';
import { hasTaskset, killAllChildren, pinSelf, readLine, spawnPinned, stopChild } from './processes.ts';
import { describeIdleMode, holdIdleMode, idleModeFromEnv, type IdleHold } from './idle-polling.ts';
import { cpuNumber, listOf, wholeNumber, wholeNumbers } from './bench-env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BENCH_DIR = join(ROOT, '.bench');

// ---------------------------------------------------------------------------------------------
// Configuration (environment)

const env = process.env;
const cfg = {
  durationS: wholeNumber(env, 'BENCH_DURATION', 5, 1),
  warmupS: wholeNumber(env, 'BENCH_WARMUP', 1, 0),
  startWarmupS: wholeNumber(env, 'BENCH_START_WARMUP', 10, 0),
  connections: wholeNumbers(env, 'BENCH_CONNECTIONS', [1, 16, 64]),
  cases: listOf(env, 'BENCH_CASES', CASES.map((c) => c.id), CASES.map((c) => c.id)),
  targets: listOf<TargetName>(env, 'BENCH_TARGETS', TARGET_ORDER, TARGET_ORDER),
  ttfbRequests: wholeNumber(env, 'BENCH_TTFB_REQUESTS', 200, 0),
  chunks: wholeNumber(env, 'BENCH_CHUNKS', 20, 1),
  gatewayCpu: cpuNumber(env, 'BENCH_GATEWAY_CPU', '0'),
  loadCpu: cpuNumber(env, 'BENCH_LOAD_CPU', '1'),
  idle: idleModeFromEnv(env.BENCH_IDLE),
  out: env.BENCH_OUT ?? join(BENCH_DIR, 'results.json'),
};

// ---------------------------------------------------------------------------------------------
// Results

interface Point {
  case: string;
  target: TargetName;
  connections: number;
  rps: number;
  requests: number;
  /** Microseconds: what the requests took (see wrk.ts), or wrk's corrected figures where latencyPerRequest is false. */
  latency: WrkResult['latency'];
  latencyPerRequest: boolean;
  /** Microseconds: wrk's own figures, corrected for coordinated omission. */
  latencyCorrected: WrkResult['latencyCorrected'];
  errors: WrkResult['errors'];
  /** Gateway CPU time (user+sys) per request, microseconds; absent for direct. */
  cpuUsPerReq?: number;
  /** Gateway RSS after the point, MB. */
  rssMB?: number;
  /** Fake upstream CPU per request, microseconds (to see whether the floor itself is saturated). */
  upstreamCpuUsPerReq?: number;
  /** Filled after all targets ran: latency minus direct's for the same case and connections (us). */
  overP50Us?: number;
  overP99Us?: number;
  /** The same from wrk's corrected figures. */
  overP99CorrectedUs?: number;
  /** rps / portkey rps for the same case and connections. */
  vsPortkey?: number;
}

interface TargetStatus {
  name: TargetName;
  label: string;
  status: 'ok' | 'unavailable' | 'skipped';
  reason?: string;
  peakRssMB?: number;
  idleRssMB?: number;
  /** Per case: why it was not measured. */
  unsupported: Record<string, string>;
}

interface TtfbPoint extends TtfbResult {
  case: string;
  target: TargetName;
  overP50Us?: number;
}

const points: Point[] = [];
const ttfbs: TtfbPoint[] = [];
const statuses: TargetStatus[] = [];

const log = (s: string) => process.stderr.write(s + '\n');
const MB = (b: number) => Math.round((b / 1048576) * 10) / 10;

// ---------------------------------------------------------------------------------------------
// Measuring one target

async function measureTarget(target: Target, status: TargetStatus, cases: BenchCase[], upstreamPid: number): Promise<void> {
  if (target.pid) status.idleRssMB = MB(sampleProc(target.pid).rssBytes);
  let started = false;
  for (const c of cases) {
    const routed = target.route(c);
    if ('unsupported' in routed) {
      status.unsupported[c.id] = routed.unsupported;
      continue;
    }
    // A catalog seeded just before may take up to ~1 s to reach the gateway (SPEC: propagation
    // within about a second), so a failing probe is retried for a few seconds before giving up.
    let bad = await probe(routed);
    for (const deadline = Date.now() + 5000; bad && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 250));
      bad = await probe(routed);
      if (!bad) log(`  ${target.name} ${c.id}: probe passed after a retry`);
    }
    if (bad) {
      status.unsupported[c.id] = bad;
      log(`  ${target.name} ${c.id}: not measured: ${bad}`);
      continue;
    }
    // A fresh process serves at about half its steady speed while the JIT warms (5-15 s under load).
    const warmupS = started ? cfg.warmupS : Math.max(cfg.warmupS, cfg.startWarmupS);
    started = true;
    if (warmupS > 0) {
      await runWrk(routed, { connections: 16, durationS: warmupS, cpu: cfg.loadCpu }, join(BENCH_DIR, 'wrk'));
    }
    for (const conns of cfg.connections) {
      const before: ProcSample | undefined = target.pid ? sampleProc(target.pid) : undefined;
      const upBefore = sampleProc(upstreamPid);
      const r = await runWrk(routed, { connections: conns, durationS: cfg.durationS, cpu: cfg.loadCpu }, join(BENCH_DIR, 'wrk'));
      const upAfter = sampleProc(upstreamPid);
      const p: Point = {
        case: c.id,
        target: target.name,
        connections: conns,
        rps: r.rps,
        requests: r.requests,
        latency: r.latency,
        latencyPerRequest: r.latencyPerRequest,
        latencyCorrected: r.latencyCorrected,
        errors: r.errors,
        upstreamCpuUsPerReq: r.requests ? (upAfter.cpuUs - upBefore.cpuUs) / r.requests : undefined,
      };
      if (target.pid && before) {
        if (!alive(target.pid)) throw new Error(`${target.name} (pid ${target.pid}) died during ${c.id}`);
        const after = sampleProc(target.pid);
        p.cpuUsPerReq = r.requests ? (after.cpuUs - before.cpuUs) / r.requests : undefined;
        p.rssMB = MB(after.rssBytes);
        status.peakRssMB = MB(after.peakRssBytes);
      }
      points.push(p);
      const errs = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
      log(
        `  ${target.name.padEnd(7)} ${c.id.padEnd(22)} c=${String(conns).padEnd(3)} ${fmtInt(r.rps).padStart(7)} req/s` +
          `  p50 ${ms(r.latency.p50)} ms  p99 ${ms(r.latency.p99)} ms${r.latencyPerRequest ? '' : ' (wrk\'s)'}  wrk's p99 ${ms(r.latencyCorrected.p99)} ms${errs ? `  errors ${errs}` : ''}`,
      );
    }
    if (c.stream && cfg.ttfbRequests > 0) {
      const tt = await measureTtfb(routed as RoutedRequest, cfg.ttfbRequests);
      ttfbs.push({ ...tt, case: c.id, target: target.name });
      log(`  ${target.name.padEnd(7)} ${c.id.padEnd(22)} ttfb p50 ${ms(tt.firstByte.p50)} ms  p99 ${ms(tt.firstByte.p99)} ms`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Formatting

function ms(us: number | undefined, signed = false): string {
  if (us === undefined || Number.isNaN(us)) return '-';
  const v = us / 1000;
  const s = v.toFixed(v !== 0 && Math.abs(v) < 10 ? 3 : 1);
  return signed && v >= 0 ? '+' + s : s;
}
function fmtInt(n: number | undefined): string {
  return n === undefined || Number.isNaN(n) ? '-' : Math.round(n).toLocaleString('en-US');
}

function table(rows: string[][], align: Array<'l' | 'r'>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => r.map((cell, i) => (align[i] === 'l' ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd())
    .join('\n');
}

function report(cases: BenchCase[], idle: IdleHold): string {
  const out: string[] = [];
  const st = (n: TargetName) => statuses.find((s) => s.name === n);
  out.push('');
  out.push(`Relay bench: ${cfg.durationS} s per point, wrk -t1, gateway on cpu ${cfg.gatewayCpu}, wrk + fake upstream on cpu ${cfg.loadCpu}; ${describeIdleMode(idle)}`);
  out.push("  p50, p99: what the requests took (the samples wrk adds for coordinated omission taken out; * marks wrk's own figures,");
  out.push("  where its histogram was too wide to read back); wrk's p99: wrk's figure, corrected for coordinated omission");
  for (const s of statuses) {
    out.push(`  ${s.name.padEnd(8)} ${s.status === 'ok' ? s.label : `${s.status}: ${s.reason}`}` +
      (s.idleRssMB !== undefined ? `  (rss idle ${s.idleRssMB} MB, peak ${s.peakRssMB ?? '-'} MB)` : ''));
    for (const [id, why] of Object.entries(s.unsupported)) out.push(`           ${id} not measured: ${why.slice(0, 160)}`);
  }
  const head = ['conns', 'target', 'req/s', 'p50 ms', 'p99 ms', '+p50 ms', '+p99 ms', "wrk's p99", "wrk's +p99", 'x portkey', 'cpu us/req', 'rss MB', 'errors'];
  const align: Array<'l' | 'r'> = ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'];
  for (const c of cases) {
    out.push('');
    out.push(`${c.id}: ${c.title}`);
    const rows = [head];
    for (const conns of cfg.connections) {
      for (const name of cfg.targets) {
        const s = st(name);
        const p = points.find((x) => x.case === c.id && x.target === name && x.connections === conns);
        if (!p) {
          const why = s?.status !== 'ok' ? s?.status ?? 'skipped' : s.unsupported[c.id] ? 'not measured (see top)' : '-';
          rows.push([String(conns), name, why.slice(0, 40), '', '', '', '', '', '', '', '', '', '']);
          continue;
        }
        const errs = p.errors.connect + p.errors.read + p.errors.write + p.errors.status + p.errors.timeout;
        rows.push([
          String(conns),
          name,
          fmtInt(p.rps),
          ms(p.latency.p50) + (p.latencyPerRequest ? '' : '*'),
          ms(p.latency.p99) + (p.latencyPerRequest ? '' : '*'),
          name === 'direct' ? '' : ms(p.overP50Us, true),
          name === 'direct' ? '' : ms(p.overP99Us, true),
          ms(p.latencyCorrected.p99),
          name === 'direct' ? '' : ms(p.overP99CorrectedUs, true),
          p.vsPortkey === undefined ? '' : p.vsPortkey.toFixed(2),
          p.cpuUsPerReq === undefined ? '' : fmtInt(p.cpuUsPerReq),
          p.rssMB === undefined ? '' : String(p.rssMB),
          String(errs),
        ]);
      }
    }
    out.push(table(rows, align));
  }
  if (ttfbs.length) {
    out.push('');
    out.push(`time to first body byte, streams (sequential requests over one keep-alive connection, n=${cfg.ttfbRequests})`);
    const rows = [['case', 'target', 'ttfb p50 ms', 'ttfb p99 ms', '+p50 ms', 'headers p50 ms', 'total p50 ms', 'errors']];
    for (const c of cases) {
      for (const name of cfg.targets) {
        const tt = ttfbs.find((x) => x.case === c.id && x.target === name);
        if (!tt) continue;
        rows.push([
          c.id,
          name,
          ms(tt.firstByte.p50),
          ms(tt.firstByte.p99),
          name === 'direct' ? '' : ms(tt.overP50Us, true),
          ms(tt.headers.p50),
          ms(tt.total.p50),
          String(tt.errors),
        ]);
      }
    }
    out.push(table(rows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r']));
  }
  out.push('');
  return out.join('\n');
}

function derive(): void {
  for (const p of points) {
    const d = points.find((x) => x.case === p.case && x.connections === p.connections && x.target === 'direct');
    if (d && p.target !== 'direct') {
      // Per-request figures against per-request figures; wrk's against wrk's where either lacks them.
      const [mine, direct] = p.latencyPerRequest && d.latencyPerRequest ? [p.latency, d.latency] : [p.latencyCorrected, d.latencyCorrected];
      p.overP50Us = mine.p50 - direct.p50;
      p.overP99Us = mine.p99 - direct.p99;
      p.overP99CorrectedUs = p.latencyCorrected.p99 - d.latencyCorrected.p99;
    }
    const pk = points.find((x) => x.case === p.case && x.connections === p.connections && x.target === 'portkey');
    if (pk && p.target !== 'portkey' && p.target !== 'direct' && pk.rps > 0) p.vsPortkey = p.rps / pk.rps;
  }
  for (const t of ttfbs) {
    const d = ttfbs.find((x) => x.case === t.case && x.target === 'direct');
    if (d && t.target !== 'direct') t.overP50Us = t.firstByte.p50 - d.firstByte.p50;
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const wv = await wrkVersion();
  if (!wv) {
    throw new Error('wrk not found: install it with `apt-get update && apt-get install -y wrk`');
  }
  const cases = CASES.filter((c) => cfg.cases.includes(c.id));
  if (!cases.length) throw new Error(`BENCH_CASES matches no case; known: ${CASES.map((c) => c.id).join(', ')}`);
  mkdirSync(BENCH_DIR, { recursive: true });
  // Before pinning: availableParallelism() follows this process's affinity mask.
  if (os.availableParallelism() < 2) log('warning: fewer than 2 CPUs; the gateway and the load generator share a core');
  const pinned = pinSelf(cfg.loadCpu);
  if (!hasTaskset()) log('warning: taskset is unavailable; processes are not pinned');

  const idle = holdIdleMode(cfg.idle);
  log(describeIdleMode(idle));
  // RELAY_BENCH_OTEL=<ratio>: Relay traces at that ratio and exports to a sink in this process (relay-target.ts).
  const sink = env.RELAY_BENCH_OTEL && !env.RELAY_BENCH_OTEL_ENDPOINT ? await startOtlpSink() : null;
  if (sink) env.RELAY_BENCH_OTEL_ENDPOINT = sink.url;
  if (env.RELAY_BENCH_OTEL) log(`Relay traces ${Number(env.RELAY_BENCH_OTEL) * 100}% of requests to ${env.RELAY_BENCH_OTEL_ENDPOINT}`);
  const upstream = spawnPinned(cfg.loadCpu, process.execPath, ['--import', 'tsx', join(ROOT, 'test/bench/upstream-process.ts'), '--chunks', String(cfg.chunks)], {
    cwd: ROOT,
  });
  const upstreamUrl = await readLine(upstream, 'READY ');
  log(`fake upstream ${upstreamUrl} (pid ${upstream.pid}, ${cfg.chunks} chunks per stream)`);

  try {
    for (const name of cfg.targets) {
      const status: TargetStatus = { name, label: name, status: 'ok', unsupported: {} };
      statuses.push(status);
      let target: Target | undefined;
      try {
        if (name === 'direct') target = directTarget(upstreamUrl);
        else if (name === 'node-proxy') {
          const proxy = spawnPinned(cfg.gatewayCpu, process.execPath, [...splitArgs(env.BENCH_PROXY_NODE_ARGS), '--import', 'tsx', join(ROOT, 'test/bench/node-proxy.ts'), '--upstream', upstreamUrl], { cwd: ROOT });
          target = nodeProxyTarget(await readLine(proxy, 'READY '), proxy.pid!, () => stopChild(proxy));
        } else if (name === 'relay') {
          target = relayTarget(await startRelayForBench(upstreamUrl, { cpu: cfg.gatewayCpu, workDir: join(BENCH_DIR, 'relay') }));
        } else if (name === 'portkey') {
          const dir = join(BENCH_DIR, 'portkey');
          await installPortkey(dir, log);
          target = portkeyTarget(await startPortkey(dir, cfg.gatewayCpu), upstreamUrl);
        } else throw new Error(`unknown target ${name}`);
      } catch (err) {
        status.status = 'unavailable';
        status.reason = `failed to start: ${(err as Error).message}`;
        log(`${name}: ${status.reason}`);
        continue;
      }
      status.label = target.label;
      log(`${name}: ${target.label}${target.pid ? ` (pid ${target.pid})` : ''}`);
      try {
        await measureTarget(target, status, cases, upstream.pid!);
      } catch (err) {
        status.status = 'unavailable';
        status.reason = `failed while measuring: ${(err as Error).message}`;
        log(`${name}: ${status.reason}`);
      } finally {
        await target.stop();
      }
    }
  } finally {
    await stopChild(upstream);
    idle.release();
  }

  derive();
  process.stdout.write(report(cases, idle) + '\n');
  let commit: string | undefined;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    /* not a git checkout */
  }
  const result = {
    meta: {
      date: new Date().toISOString(),
      commit,
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      wrk: wv,
      pinned,
      ...cfg,
      idle: idle.mode,
      otelSampleRatio: env.RELAY_BENCH_OTEL ? Number(env.RELAY_BENCH_OTEL) : null,
    },
    targets: statuses,
    points,
    ttfb: ttfbs,
  };
  mkdirSync(resolve(cfg.out, '..'), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(result, null, 2) + '\n');
  log(`results written to ${cfg.out}`);
  if (sink) log(`the OTLP sink took ${sink.exports} exports, ${sink.bytes.toLocaleString('en-US')} bytes`);
  await sink?.close();
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killAllChildren();
    process.exit(130);
  });
}

main().catch((err) => {
  killAllChildren();
  log(`bench failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
