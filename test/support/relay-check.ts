// Runs `relay check --config <file>` as an operator would, with only the environment given
// (nothing from the machine running the test leaks in), and dummy values for the variables the
// example configs require.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Dummy values for every variable the example configs require. */
export const DUMMY_ENV: Record<string, string> = {
  DATABASE_URL: 'postgres://relay:dummy@postgres.invalid:5432/relay',
  VALKEY_URL: 'redis://valkey.invalid:6379/0',
  CLICKHOUSE_URL: 'http://clickhouse.invalid:8123',
  S3_BUCKET: 'relay-payloads',
  S3_ENDPOINT: 'http://minio.invalid:9000',
};

export function relayCheck(configFile: string, env: Record<string, string | undefined>): Promise<{ code: number | null; out: string; err: string }> {
  const clean: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  const child = spawn(process.execPath, [path.join(root, 'bin/relay.js'), 'check', '--config', configFile], { cwd: root, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, out, err });
  }));
}

