// Child processes for the bench: spawned pinned to a CPU with taskset, tracked by pid, stopped by
// pid (never by name), and waited on until they answer HTTP.
import { spawn, execFileSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import net from 'node:net';

let tasksetOk: boolean | undefined;
export function hasTaskset(): boolean {
  if (tasksetOk === undefined) {
    try {
      execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
      tasksetOk = true;
    } catch {
      tasksetOk = false;
    }
  }
  return tasksetOk;
}

/** Pins the current process (and its future threads) to `cpu`. */
export function pinSelf(cpu: string): boolean {
  if (!hasTaskset()) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const children = new Set<ChildProcess>();

/** Spawns `cmd args` under `taskset -c cpu` (taskset execs, so child.pid is the command's pid).
 * Output goes to `logFile` when given. */
export function spawnPinned(
  cpu: string | undefined,
  cmd: string,
  args: string[],
  opts: SpawnOptions & { logFile?: string } = {},
): ChildProcess {
  const [c, a] = cpu !== undefined && hasTaskset() ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
  let fd: number | undefined;
  if (opts.logFile) fd = openSync(opts.logFile, 'a');
  const child = spawn(c, a as string[], {
    ...opts,
    stdio: opts.stdio ?? (fd !== undefined ? ['ignore', fd, fd] : ['ignore', 'pipe', 'inherit']),
  });
  if (fd !== undefined) closeSync(fd);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Kills every child this process spawned (by pid); for exit paths. */
export function killAllChildren(): void {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `url` until any HTTP answer arrives (any status), or throws after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 30_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`process exited with code ${child.exitCode} before answering ${url}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no answer from ${url} after ${timeoutMs} ms: ${String(last)}`);
}

/** Reads the first line starting with `prefix` from the child's stdout. */
export async function readLine(child: ChildProcess, prefix: string, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no "${prefix}" line after ${timeoutMs} ms`)), timeoutMs);
    child.stdout!.setEncoding('utf8');
    const onData = (d: string) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining
        resolve(line.slice(prefix.length).trim());
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${code}) before printing "${prefix}"`));
    });
  });
}
