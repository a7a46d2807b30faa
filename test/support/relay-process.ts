// A Relay instance as a real child process (`node bin/relay.js start --config <file>`), for
// tests of several instances sharing one deployment: started with its own ports and data
// directory, reached over HTTP on 127.0.0.1, stopped with a signal. Output is kept (the last
// lines) so a failure can show why an instance did not come up.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, type ApiResponse } from '../../core/testing.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export interface RelayProcess {
  name: string;
  child: ChildProcess;
  inferenceUrl: string;
  controlUrl: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** The last lines the process wrote. */
  output(): string;
  /** Control API call with the admin token. */
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Kills the process if it still runs and removes its data directory. */
  dispose(): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  configFile: string;
  adminToken: string;
  env: Record<string, string>;
  /** Bound on coming up (healthz 200 on both listeners). Default 60 s. */
  startTimeoutMs?: number;
  /** Node flags for the Relay process (e.g. --inspect). */
  nodeArgs?: string[];
  /** The script to run instead of bin/relay.js (e.g. a compiled build's bin/relay-cli.js). */
  entry?: string;
}

export async function startRelayProcess(options: StartProcessOptions): Promise<RelayProcess> {
  const [port, controlPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `relay-${options.name}-`));
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.entry ?? path.join(root, 'bin/relay.js'), 'start', '--config', options.configFile], {
    cwd: root,
    env: { ...process.env, ...options.env, RELAY_PORT: String(port), RELAY_CONTROL_PORT: String(controlPort), RELAY_DATA_DIR: dataDir, RELAY_ADMIN_TOKEN: options.adminToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (d: Buffer) => {
    lines.push(...d.toString('utf8').split('\n').filter((l) => l !== ''));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const inferenceUrl = `http://127.0.0.1:${port}`;
  const controlUrl = `http://127.0.0.1:${controlPort}`;

  const api = async <T>(method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> => {
    const res = await fetch(controlUrl + p, {
      method,
      headers: { authorization: `Bearer ${options.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };

  const proc: RelayProcess = {
    name: options.name, child, inferenceUrl, controlUrl, exited, api,
    output: () => lines.join('\n'),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  let exitedEarly = false;
  void exited.then(() => { exitedEarly = true; });
  try {
    await eventually(async () => {
      if (exitedEarly) throw new Error(`${options.name} exited during start-up:\n${proc.output()}`);
      try {
        const [a, b] = await Promise.all([fetch(`${inferenceUrl}/healthz`), fetch(`${controlUrl}/api/version`)]);
        return a.status === 200 && b.status === 200;
      } catch {
        return false;
      }
    }, options.startTimeoutMs ?? 60_000, 200);
  } catch (err) {
    await proc.dispose();
    throw err;
  }
  return proc;
}
