// Runs a real coding-agent CLI (Codex, Claude Code) from the test tools (test/tools/node_modules,
// installed by `npm test`) as a child process with a bounded run time: on timeout the whole
// process group is killed. Both ship native binaries in their npm packages and need no network
// beyond 127.0.0.1.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TEST_TOOLS_DIR, TEST_TOOLS_MISSING } from '../tools/paths.ts';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

/** The first of `candidates` (relative to test/tools) that exists. */
export function findBinary(...candidates: string[]): string {
  for (const c of candidates) {
    const abs = path.join(TEST_TOOLS_DIR, c);
    if (existsSync(abs)) return abs;
  }
  throw new Error(`${candidates.map((c) => `test/tools/${c}`).join(' or ')}: ${TEST_TOOLS_MISSING}`);
}

export const codexBinary = (): string => findBinary('node_modules/.bin/codex');
// The wrapper's postinstall copies the native binary over bin/claude.exe; the platform package
// holds the same binary should the postinstall not have run.
export const claudeBinary = (): string =>
  findBinary(`node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`, 'node_modules/.bin/claude');

/** A minimal environment: no inherited credentials or proxies, only what the CLI needs. */
export function cliEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', LANG: 'C.UTF-8', NO_COLOR: '1', ...extra };
}

export function runCli(bin: string, args: string[], o: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch { /* already gone */ }
    };
    const timer = setTimeout(() => { timedOut = true; kill(); }, o.timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      kill(); // helpers the CLI may have left in its group
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started });
    });
  });
}

/** JSON lines of a CLI's stdout (non-JSON lines skipped). */
export function jsonLines(stdout: string): any[] {
  const out: any[] = [];
  for (const line of stdout.split('\n')) {
    const s = line.trim();
    if (!s.startsWith('{')) continue;
    try { out.push(JSON.parse(s)); } catch { /* not JSON */ }
  }
  return out;
}
