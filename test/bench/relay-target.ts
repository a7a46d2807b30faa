// The Relay side of the bench. Everything else in test/bench/ is target-agnostic: run.ts asks this
// function for a running Relay whose catalog routes the bench models to the fake upstream, then
// drives it exactly like the direct and Portkey targets.
//
// Relay runs as its own process (`node bin/relay.js start`, started through the container image's
// entrypoint, bin/container-entrypoint.sh) pinned to the gateway core, on a
// throwaway Postgres database (DATABASE_URL; RELAY_BENCH_PGLITE=1 uses embedded PGlite instead)
// with usage logging to the file backend and payload logging off (the defaults), so the figures
// include the always-on usage record. The catalog is seeded through the admin API.
import { mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { BENCH_MODELS, UPSTREAM_KEYS } from './cases.ts';
import { freePort, spawnPinned, stopChild, waitForHttp } from './processes.ts';

export { BENCH_MODELS, UPSTREAM_KEYS };

export interface RelayBenchHandle {
  /** Inference plane, e.g. http://127.0.0.1:18080 (no trailing slash). */
  baseUrl: string;
  /** Pid of the Relay process (for /proc/<pid>/stat and status). */
  pid: number;
  /** Plaintext relay key whose policy grants every BENCH_MODELS slug. */
  relayKey: string;
  stop(): Promise<void>;
}

export interface RelayBenchOptions {
  /** CPU list for taskset, e.g. "0". */
  cpu?: string;
  /** Scratch directory (under .bench/) for config, data and logs. */
  workDir: string;
  /** Usage logging to the file backend (default on; BENCH_RELAY_LOG=off turns it off). */
  usageLogging?: boolean;
  /** The relay command to run: this checkout's bin/relay.js (built first) unless another checkout's is given. */
  entry?: string;
  /** Node flags for Relay; default: BENCH_RELAY_NODE_ARGS. */
  nodeArgs?: string[];
  /** Extra host spec for the seeded hosts (e.g. maxConnections for thousands of streams). */
  hostSpec?: Record<string, unknown>;
  /**
   * Load the otel plugin, exporting to `endpoint` at `sampleRatio`; default: RELAY_BENCH_OTEL (a
   * sample ratio, e.g. 1 or 0.01) to RELAY_BENCH_OTEL_ENDPOINT, else no tracing.
   */
  tracing?: { sampleRatio: number; endpoint: string } | null;
}

/** Tracing from RELAY_BENCH_OTEL / RELAY_BENCH_OTEL_ENDPOINT (run.ts starts a sink and sets the endpoint). */
export function tracingFromEnv(env: NodeJS.ProcessEnv = process.env): { sampleRatio: number; endpoint: string } | null {
  if (!env.RELAY_BENCH_OTEL) return null;
  const sampleRatio = Number(env.RELAY_BENCH_OTEL);
  if (!(sampleRatio >= 0 && sampleRatio <= 1)) throw new Error(`RELAY_BENCH_OTEL must be a sample ratio from 0 to 1 (got ${env.RELAY_BENCH_OTEL})`);
  if (!env.RELAY_BENCH_OTEL_ENDPOINT) throw new Error('RELAY_BENCH_OTEL needs RELAY_BENCH_OTEL_ENDPOINT (an OTLP/HTTP base URL; run.ts starts a sink and sets it)');
  return { sampleRatio, endpoint: env.RELAY_BENCH_OTEL_ENDPOINT };
}

let compiled = false;

/**
 * Builds dist/ once per bench run: Relay runs from it only when it is fresher than the sources,
 * and a run from the sources (tsx's loader) would show ~75 MB more RSS than production.
 */
function ensureCompiled(): void {
  if (compiled) return;
  execFileSync(process.execPath, [path.resolve('bin/build-server.mjs')], { stdio: 'ignore' });
  compiled = true;
}

export async function startRelayForBench(upstreamUrl: string, opts: RelayBenchOptions): Promise<RelayBenchHandle> {
  if (!opts.entry) ensureCompiled();
  mkdirSync(opts.workDir, { recursive: true });
  const usageLogging = opts.usageLogging ?? process.env.BENCH_RELAY_LOG !== 'off';
  const dataDir = path.join(opts.workDir, `data-${Date.now()}`);
  const tracing = opts.tracing === undefined ? tracingFromEnv() : opts.tracing;
  const config = path.join(opts.workDir, `${usageLogging ? 'relay' : 'relay-nolog'}${tracing ? `-otel-${tracing.sampleRatio}` : ''}.yaml`);
  writeFileSync(config, [
    'server: { host: 127.0.0.1 }',
    'log: { level: warn }',
    'plugins:',
    // Without log-file no usage backend is loaded: what logging costs is the difference.
    ...['auth-bearer', 'wire-vendor-a', 'wire-vendor-b', 'vendor-openai', 'vendor-anthropic'].map((p) => `  - use: ${p}`),
    // BENCH_LOG_DIR puts the segments elsewhere (e.g. on /dev/shm, to take the disk out).
    ...(usageLogging ? ['  - use: log-file', ...(process.env.BENCH_LOG_DIR ? [`    options: { dir: ${JSON.stringify(path.join(process.env.BENCH_LOG_DIR, path.basename(dataDir)))} }`] : [])] : []),
    ...(tracing ? ['  - use: otel', `    options: { endpoint: ${JSON.stringify(tracing.endpoint)}, protocol: http/protobuf, sampleRatio: ${tracing.sampleRatio} }`] : []),
    '',
  ].join('\n'));
  const db = process.env.RELAY_BENCH_PGLITE ? null : await createTestDatabase();
  const [port, controlPort] = [await freePort(), await freePort()];
  const adminToken = `bench-${randomBytes(12).toString('hex')}`;
  // BENCH_RELAY_NODE_ARGS passes node flags to Relay, e.g. "--cpu-prof --cpu-prof-dir=.bench/prof".
  const nodeArgs = opts.nodeArgs ?? splitArgs(process.env.BENCH_RELAY_NODE_ARGS);
  // Started as the container image starts it: through bin/container-entrypoint.sh, which gives V8
  // a 2048 MB heap ceiling on a machine without a memory limit (RELAY_MAX_HEAP_MB=0: V8's own).
  // sh and node exec in turn, so the pid is Relay's.
  const command = [process.execPath, ...nodeArgs, opts.entry ?? path.resolve('bin/relay.js'), 'start', '--config', config];
  const child = spawnPinned(opts.cpu, '/bin/sh', [path.resolve('bin/container-entrypoint.sh'), ...command], {
    env: {
      ...process.env,
      RELAY_PORT: String(port), RELAY_CONTROL_PORT: String(controlPort), RELAY_DATA_DIR: dataDir,
      RELAY_ADMIN_TOKEN: adminToken, RELAY_MASTER_KEY: generateMasterKey(), DATABASE_URL: db?.url ?? '',
    },
    logFile: path.join(opts.workDir, 'relay.log'),
  });
  const stop = async () => {
    await stopChild(child);
    await db?.drop().catch(() => undefined);
  };
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHttp(`${baseUrl}/healthz`, 60_000, child);
    const relayKey = await seed(`http://127.0.0.1:${controlPort}`, adminToken, upstreamUrl, opts.hostSpec ?? {});
    return { baseUrl, pid: child.pid!, relayKey, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function seed(controlUrl: string, token: string, upstreamUrl: string, hostSpec: Record<string, unknown>): Promise<string> {
  const api = async (p: string, body: unknown): Promise<any> => {
    const res = await fetch(`${controlUrl}/api/${p}`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`seeding ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const hostFor = async (adapter: 'openai' | 'anthropic', key: string) => {
    const provider = await api('providers', { metadata: { displayName: `bench ${adapter}` }, spec: { adapter } });
    const host = await api('hosts', { metadata: { displayName: `bench ${adapter} host` }, spec: { providerId: provider.metadata.id, baseUrl: `${upstreamUrl}/v1`, ...hostSpec } });
    await api('host-keys', { metadata: { displayName: `bench ${adapter} key` }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'stored' }, value: key } });
    return host.metadata.id as string;
  };
  const openaiHost = await hostFor('openai', UPSTREAM_KEYS.openai);
  const anthropicHost = await hostFor('anthropic', UPSTREAM_KEYS.anthropic);
  const modelIds: string[] = [];
  for (const [slug, hostId] of [[BENCH_MODELS.openai, openaiHost], [BENCH_MODELS.embeddings, openaiHost], [BENCH_MODELS.anthropic, anthropicHost]]) {
    const model = await api('models', { metadata: { displayName: slug, slug }, spec: { bindings: [{ hostId, upstreamModel: slug }] } });
    modelIds.push(model.metadata.id);
  }
  const policy = await api('policies', { metadata: { displayName: 'bench' }, spec: { modelIds } });
  const key = await api('relay-keys', { metadata: { displayName: 'bench' }, spec: { policyId: policy.metadata.id } });
  return key.plaintext as string;
}

/** Node flags from an environment variable: words separated by spaces. */
export function splitArgs(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean);
}
