// `npm run bench:table`: the README's benchmark tables from .bench/results.json (written by
// `npm run bench`), so the figures in the README are the run's own, not copied by hand. Prints
// markdown: the per-case table, the time-to-first-byte line, and each target of the performance
// issue with the figure from this run and whether it is reached.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

interface Point {
  case: string;
  target: 'direct' | 'node-proxy' | 'relay' | 'portkey';
  connections: number;
  rps: number;
  /** What the requests took, or wrk's corrected figures where latencyPerRequest is false (or absent: results before it). */
  latency: { p50: number; p99: number };
  latencyPerRequest?: boolean;
  latencyCorrected?: { p99: number };
  overP50Us?: number;
  overP99Us?: number;
  overP99CorrectedUs?: number;
  cpuUsPerReq?: number;
  rssMB?: number;
}
interface Ttfb { case: string; target: string; firstByte: { p50: number } }
interface Results {
  meta: { date: string; commit?: string; node: string; cpus: number; durationS: number; idle?: 'poll' | 'halt' };
  targets: Array<{ name: string; status: string; unsupported: Record<string, string> }>;
  points: Point[];
  ttfb: Ttfb[];
}

const file = process.argv[2] ?? join(resolve(import.meta.dirname, '../..'), '.bench/results.json');
const r = JSON.parse(readFileSync(file, 'utf8')) as Results;

const TITLES: Record<string, string> = {
  chat: 'chat, not streamed',
  'chat-stream': 'chat, streamed (20 chunks)',
  'messages-stream': 'messages, streamed (20 chunks)',
  'agent-turn-stream': 'messages, streamed, a Claude Code turn (~400 KB request)',
  'agent-turn-translated': 'Responses -> Anthropic, translated, a Codex turn (~400 KB request)',
  'responses-to-messages': 'Responses -> Anthropic, translated stream',
  embeddings: 'embeddings',
  'embeddings-1536': 'embeddings, 1536 dimensions',
};
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (us: number) => {
  const v = us / 1000;
  return Math.abs(v) >= 10 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(2);
};
const signed = (us: number) => `${us >= 0 ? '+' : '-'}${ms(Math.abs(us))}`;
const pct = (x: number) => `${Math.round(x * 100)}%`;
const at = (c: string, t: string, n: number) => r.points.find((p) => p.case === c && p.target === t && p.connections === n);

const cases = [...new Set(r.points.map((p) => p.case))];
const conns = [...new Set(r.points.map((p) => p.connections))].sort((a, b) => a - b);
const out: string[] = [];
out.push(`| case | conns | direct req/s | bare Node proxy req/s | Relay req/s | Portkey req/s | Relay ÷ Portkey | Relay ÷ direct | Relay ÷ bare proxy | bare proxy +p50 over direct | Relay +p50 / +p99 over direct | Relay +p99 over direct, wrk's corrected | Relay CPU per request | Relay RSS |`);
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const c of cases) {
  for (const n of conns) {
    const d = at(c, 'direct', n);
    const rel = at(c, 'relay', n);
    const pk = at(c, 'portkey', n);
    const bare = at(c, 'node-proxy', n);
    if (!d || !rel) continue;
    const missing = (name: string) => (r.targets.find((t) => t.name === name)?.unsupported[c] ? '(not supported)' : '(not run)');
    out.push(`| ${TITLES[c] ?? c} | ${n} | ${int(d.rps)} | ${bare ? int(bare.rps) : missing('node-proxy')} | ${int(rel.rps)} | ${pk ? int(pk.rps) : missing('portkey')} | ${pk ? `${(rel.rps / pk.rps).toFixed(1)}x` : ''} | ${pct(rel.rps / d.rps)} | ${bare ? pct(rel.rps / bare.rps) : ''} | ${bare ? `${signed(bare.overP50Us ?? bare.latency.p50 - d.latency.p50)} ms` : ''} | ${signed(rel.overP50Us ?? rel.latency.p50 - d.latency.p50)} / ${signed(rel.overP99Us ?? rel.latency.p99 - d.latency.p99)} ms${rel.latencyPerRequest !== true || d.latencyPerRequest !== true ? ' (wrk\'s)' : ''} | ${rel.overP99CorrectedUs === undefined ? '' : `${signed(rel.overP99CorrectedUs)} ms`} | ${rel.cpuUsPerReq ? `${int(rel.cpuUsPerReq)} µs` : ''} | ${rel.rssMB ? `${Math.round(rel.rssMB)} MB` : ''} |`);
  }
}
out.push('');
const ttfbOver = (c: string, t: string) => {
  const d = r.ttfb.find((x) => x.case === c && x.target === 'direct');
  const x = r.ttfb.find((y) => y.case === c && y.target === t);
  return d && x ? (x.firstByte.p50 - d.firstByte.p50) : undefined;
};
const streamCases = [...new Set(r.ttfb.map((x) => x.case))];
if (streamCases.length) out.push(`Time to the first body byte of a stream (sequential requests, p50) over direct: ${streamCases
  .map((c) => {
    const other = (t: string) => (ttfbOver(c, t) === undefined ? 'n/a' : `${signed(ttfbOver(c, t)!)} ms`);
    return `Relay ${signed(ttfbOver(c, 'relay') ?? NaN)} ms, bare Node proxy ${other('node-proxy')}, Portkey ${other('portkey')} (${c})`;
  })
  .join('; ')}.`);
if (streamCases.length) out.push('');
const idle = r.meta.idle === 'halt' ? "idle CPUs halted (the machine's default)" : r.meta.idle === 'poll' ? 'idle CPUs polled (PM QoS cpu_dma_latency=0)' : 'idle CPUs not recorded';
out.push(`Run: ${r.meta.date.slice(0, 10)}, commit ${r.meta.commit ?? '?'}, Node ${r.meta.node}, ${r.meta.cpus} CPUs, ${r.meta.durationS} s per point, ${idle}.`);
process.stdout.write(out.join('\n') + '\n');
