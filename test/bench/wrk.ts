// A thin wrapper around wrk (Debian package `wrk`): one thread, N connections, fixed duration, a
// generated Lua script for the POST body and headers, and a Lua done() that prints the figures as
// JSON on one line. wrk rather than autocannon: on 2 cores it leaves far more CPU to the target.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';

export interface WrkRequest {
  url: string;
  method?: string;
  headers: Record<string, string>;
  body?: string;
}

export interface WrkResult {
  requests: number;
  durationUs: number;
  bytes: number;
  rps: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** Microseconds. */
  latency: { min: number; mean: number; stdev: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

/**
 * A Lua string literal of the UTF-8 bytes of `s`: printable ASCII as it is (but a quote and a backslash
 * escaped), every other byte as a decimal escape, so a body may carry any text (agents' do).
 */
function luaString(s: string): string {
  let out = '"';
  for (const byte of Buffer.from(s, 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

const DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency":{"min":%d,"mean":%.2f,"stdev":%.2f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
`;

/** Writes (once per distinct request) the Lua script that sets method, body and headers. */
export function writeScript(dir: string, req: WrkRequest): string {
  mkdirSync(dir, { recursive: true });
  let lua = `wrk.method = ${luaString(req.method ?? 'POST')}\n`;
  if (req.body !== undefined) lua += `wrk.body = ${luaString(req.body)}\n`;
  for (const [k, v] of Object.entries(req.headers)) lua += `wrk.headers[${luaString(k)}] = ${luaString(v)}\n`;
  lua += DONE;
  const file = join(dir, `req-${createHash('sha256').update(lua).digest('hex').slice(0, 12)}.lua`);
  writeFileSync(file, lua);
  return file;
}

export interface WrkRun {
  connections: number;
  durationS: number;
  /** CPU list for taskset (e.g. "1"); undefined runs unpinned. */
  cpu?: string;
  timeoutS?: number;
}

export async function runWrk(req: WrkRequest, run: WrkRun, scriptDir: string): Promise<WrkResult> {
  const script = writeScript(scriptDir, req);
  const wrkArgs = ['-t1', `-c${run.connections}`, `-d${run.durationS}s`, `--timeout`, `${run.timeoutS ?? 10}s`, '-s', script, req.url];
  const [cmd, args] = run.cpu !== undefined ? ['taskset', ['-c', run.cpu, 'wrk', ...wrkArgs]] : ['wrk', wrkArgs];
  const out = await new Promise<string>((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 4 << 20, timeout: (run.durationS + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
  const line = out.split('\n').find((l) => l.startsWith('WRKJSON '));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const j = JSON.parse(line.slice(8));
  return {
    requests: j.requests,
    durationUs: j.duration_us,
    bytes: j.bytes,
    rps: j.requests / (j.duration_us / 1e6),
    errors: j.errors,
    latency: j.latency,
  };
}

/** The installed wrk's version line, or undefined when wrk is missing. */
export async function wrkVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('wrk', ['-v'], (err, stdout, stderr) => {
      const text = `${stdout}${stderr}`.trim().split('\n')[0];
      resolve(text && /wrk/i.test(text) ? text : err ? undefined : text);
    });
  });
}
