// Process accounting from /proc (Linux): CPU time and resident memory of a process we started.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let clkTck: number | undefined;
/** Clock ticks per second for /proc/<pid>/stat times (CLK_TCK, nearly always 100). */
export function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

export interface ProcSample {
  /** user + system CPU time, in microseconds. */
  cpuUs: number;
  /** Resident set size, bytes. */
  rssBytes: number;
  /** Peak resident set size (VmHWM), bytes. */
  peakRssBytes: number;
  at: number;
}

/** Reads /proc/<pid>/stat (utime, stime) and /proc/<pid>/status (VmRSS, VmHWM). */
export function sampleProc(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is parenthesised and may contain spaces.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return {
    cpuUs: ((utime + stime) * 1e6) / ticksPerSecond(),
    rssBytes: kb('VmRSS'),
    peakRssBytes: kb('VmHWM'),
    at: Date.now(),
  };
}

/** True when `pid` still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
