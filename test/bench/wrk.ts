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
  /**
   * Microseconds: what the requests took (wrk's added samples taken out again; see DONE), or, where
   * reading wrk's histogram back would take too long, wrk's corrected figures (`latencyPerRequest` false).
   */
  latency: LatencyFigures;
  latencyPerRequest: boolean;
  /** Requests the per-request figures count: `requests`, less any that timed out. */
  latencySamples?: number;
  /** Microseconds: wrk's own figures, corrected for coordinated omission. */
  latencyCorrected: LatencyFigures;
}

export interface LatencyFigures {
  min: number;
  mean: number;
  stdev: number;
  max: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
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

/** Steps wrk may take reading its histogram back (about a nanosecond each); see DONE. */
const STEP_BUDGET = 2e9;

/**
 * wrk corrects its latency histogram for coordinated omission before done() sees it (stats_correct
 * in wrk's stats.c): for each latency n of at least twice the mean interval between a connection's
 * requests, e = duration / (requests / connections), it adds a sample at each of n - e, n - 2e, ...
 * down to e. At one connection the interval is the latency itself (~30 us direct), so one 10 ms
 * stall anywhere on the machine becomes ~300 samples, and a handful of them set the p99 (direct's
 * p99 read 8 ms with a p50 of 0.02 ms). done() takes the added samples out again, walking down from
 * the largest latency (what was added at n came from n + e, n + 2e, ...), and prints the latencies
 * the requests took, beside wrk's corrected figures.
 */
const DONE = `
local function figures(count_at, lo, hi, count)
  local out = { min = -1, max = 0, mean = 0, stdev = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0 }
  if count <= 0 then return out end
  local sum = 0
  for n = lo, hi do
    local c = count_at(n)
    if c > 0 then
      if out.min < 0 then out.min = n end
      out.max = n
      sum = sum + c * n
    end
  end
  out.mean = sum / count
  local squares = 0
  for n = lo, hi do
    local c = count_at(n)
    if c > 0 then squares = squares + c * (n - out.mean) ^ 2 end
  end
  if count > 1 then out.stdev = math.sqrt(squares / (count - 1)) end
  -- wrk's rank: round(p / 100 * count + 0.5), then the first latency the running count reaches.
  local wanted = { { "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p999", 99.9 } }
  local next_wanted, seen = 1, 0
  for n = lo, hi do
    seen = seen + count_at(n)
    while next_wanted <= #wanted and seen >= math.floor(wanted[next_wanted][2] / 100 * count + 1) do
      out[wanted[next_wanted][1]] = n
      next_wanted = next_wanted + 1
    end
    if next_wanted > #wanted then break end
  end
  return out
end

local function latency_json(f)
  return string.format('{"min":%d,"mean":%.2f,"stdev":%.2f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}',
    math.max(f.min, 0), f.mean, f.stdev, f.max, f.p50, f.p90, f.p99, f.p999)
end

done = function(summary, latency, requests)
  local e = summary.errors
  local lo, hi = latency.min, latency.max
  local corrected = { min = lo, max = hi, mean = latency.mean, stdev = latency.stdev, p50 = latency:percentile(50),
    p90 = latency:percentile(90), p99 = latency:percentile(99), p999 = latency:percentile(99.9) }
  local measured = { min = -1, max = 0, mean = 0, stdev = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0 }
  local measured_count = 0
  -- latency(i) is the i-th distinct latency and its count, found by a walk from the smallest, so
  -- reading them all costs distinct x range steps; past the budget the figures stay wrk's.
  local distinct = #latency
  if summary.requests > 0 and hi >= lo and distinct * (hi - lo + 1) <= STEP_BUDGET then
    local recorded = {}
    for i = 1, distinct do
      local value, count = latency(i)
      recorded[value - lo + 1] = count
    end
    local per_connection = math.floor(summary.requests / CONNECTIONS)
    local interval = per_connection > 0 and math.floor(summary.duration / per_connection) or math.huge
    local orig, added_from_above = {}, {}
    for n = hi, lo, -1 do
      local i = n - lo + 1
      local above = 0
      if n + interval <= hi then
        local j = i + interval
        above = orig[j] + added_from_above[j]
      end
      local c = recorded[i] or 0
      if n > interval then c = c - above end
      orig[i] = c
      added_from_above[i] = above
      measured_count = measured_count + c
    end
    measured = figures(function(n) return orig[n - lo + 1] end, lo, hi, measured_count)
  else
    measured = corrected
    measured_count = -1
  end
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency":%s,"latency_samples":%d,"latency_corrected":%s}\\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency_json(measured), measured_count, latency_json(corrected)))
end
`;

/** Writes (once per distinct request) the Lua script that sets method, body and headers. */
export function writeScript(dir: string, req: WrkRequest, connections: number): string {
  mkdirSync(dir, { recursive: true });
  let lua = `CONNECTIONS = ${connections}\nSTEP_BUDGET = ${STEP_BUDGET}\nwrk.method = ${luaString(req.method ?? 'POST')}\n`;
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
  const script = writeScript(scriptDir, req, run.connections);
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
    latencyPerRequest: j.latency_samples >= 0,
    latencySamples: j.latency_samples >= 0 ? j.latency_samples : undefined,
    latencyCorrected: j.latency_corrected,
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
