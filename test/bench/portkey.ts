// The peer gateway: Portkey's open-source gateway, installed into a scratch directory with
// @hono/node-server pinned to 1.14.1 (1.15.2 breaks every stream with >= 1.14.2, see
// ../shared/PEERS.md and Portkey-AI/gateway#1389), started headless, routed per request to the fake
// upstream with x-portkey-provider and x-portkey-custom-host.
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, spawnPinned, stopChild, waitForHttp } from './processes.ts';

export const PORTKEY_VERSION = '1.15.2';
const PACKAGE_JSON = {
  name: 'relay-bench-portkey',
  private: true,
  dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION, '@hono/node-server': '1.14.1' },
  overrides: { '@hono/node-server': '1.14.1' },
};

function entry(dir: string): string {
  return join(dir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
}

function installedVersion(dir: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Installs Portkey into `dir` (once; skipped when the pinned version is already there). */
export async function installPortkey(dir: string, log: (s: string) => void = () => {}): Promise<void> {
  if (installedVersion(dir) === PORTKEY_VERSION && existsSync(entry(dir))) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(PACKAGE_JSON, null, 2) + '\n');
  log(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir} ...`);
  await new Promise<void>((resolve, reject) => {
    execFile('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, timeout: 300_000 }, (err, _o, stderr) =>
      err ? reject(new Error(`npm install of Portkey failed: ${err.message}\n${stderr}`)) : resolve(),
    );
  });
  if (!existsSync(entry(dir))) throw new Error(`Portkey installed but ${entry(dir)} is missing`);
}

export interface PortkeyHandle {
  baseUrl: string;
  pid: number;
  version: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startPortkey(dir: string, cpu: string | undefined): Promise<PortkeyHandle> {
  const port = await freePort();
  const child = spawnPinned(cpu, process.execPath, [entry(dir), `--port=${port}`, '--headless'], {
    cwd: dir,
    logFile: join(dir, 'server.log'),
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(baseUrl + '/', 30_000, child);
  return {
    baseUrl,
    pid: child.pid!,
    version: installedVersion(dir) ?? PORTKEY_VERSION,
    child,
    stop: () => stopChild(child),
  };
}
