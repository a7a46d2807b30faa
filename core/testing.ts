// Helpers for testing Relay and its plugins: boot a whole instance on ports 0 (embedded PGlite
// or a throwaway Postgres database), call its admin API, and seed a catalog that routes to an
// upstream. Exported as `relay-gateway/testing` for out-of-tree plugins.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { createRelay, type Relay } from './server/relay.ts';
import { LOG_REDACT_PATHS } from './server/redact.ts';
import { generateMasterKey } from './crypto/sealing.ts';

import { UpstreamClient } from './http/upstream-client.ts';
export const DEFAULT_TEST_PLUGINS = [
  { use: 'auth-bearer' },
  { use: 'wire-vendor-a' },
  { use: 'wire-vendor-b' },
  { use: 'wire-canonical' },
  { use: 'vendor-openai' },
  { use: 'vendor-anthropic' },
  { use: 'log-file' },
];

/** The Postgres server tests create throwaway databases on. */
export const TEST_PG_ADMIN_URL = process.env.RELAY_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty database on the test Postgres server; `drop()` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `relay_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface StartRelayOptions {
  /**
   * Start from this config file, as `relay start --config` does: its plugins resolve relative to
   * it, and `plugins`, `config` and `baseDir` are ignored. Ports (0), database, data directory,
   * admin token and master key still come from the environment set here, and RELAY_HOST is
   * 127.0.0.1 for files that use it.
   */
  configFile?: string;
  /** Plugin list (default: DEFAULT_TEST_PLUGINS). */
  plugins?: Array<{ use: string; options?: Record<string, unknown> }>;
  /** Extra config keys merged over the defaults. */
  config?: Record<string, unknown>;
  /** Directory relative plugin paths resolve against. */
  baseDir?: string;
  /**
   * `postgres` (default: a fresh database on the test server; fast), `pglite` (embedded;
   * RELAY_TEST_DB=pglite makes it the default), or a database URL to share.
   */
  database?: 'pglite' | 'postgres' | string;
  env?: Record<string, string | undefined>;
  /** Defaults to a fresh key; null starts without one. */
  masterKey?: string | null;
  /** Log level (default silent; RELAY_TEST_LOG overrides). */
  logLevel?: string;
  /** Where log lines go (default stdout); each write is one JSON line, redacted as in production. */
  logStream?: { write(line: string): void };
  /** Data directory (default: a temporary one, removed on close). */
  dataDir?: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestRelay {
  relay: Relay;
  inferenceUrl: string;
  controlUrl: string;
  adminToken: string;
  masterKey: string | null;
  databaseUrl: string | null;
  dataDir: string;
  /** Calls the control API with the admin token. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export async function startRelay(options: StartRelayOptions = {}): Promise<TestRelay> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'relay-test-'));
  const ownDataDir = options.dataDir === undefined;
  const mode = options.database ?? (process.env.RELAY_TEST_DB === 'pglite' ? 'pglite' : 'postgres');
  const testDb = mode === 'postgres' ? await createTestDatabase() : null;
  const databaseUrl = testDb?.url ?? (mode !== 'pglite' ? mode : null);
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const masterKey = options.masterKey === undefined ? generateMasterKey() : options.masterKey;
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl ?? undefined,
    RELAY_ADMIN_TOKEN: adminToken,
    RELAY_MASTER_KEY: masterKey ?? undefined,
    RELAY_PORT: '0',
    RELAY_CONTROL_PORT: '0',
    RELAY_DATA_DIR: dataDir,
    RELAY_HOST: '127.0.0.1',
    ...options.env,
  };
  const level = process.env.RELAY_TEST_LOG ?? options.logLevel ?? 'silent';
  let relay: Relay;
  try {
    const logger = options.logStream
      ? pino({ level, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } }, options.logStream)
      : pino({ level });
    relay = await createRelay(options.configFile ? { configFile: options.configFile, env, logger } : {
      config: { server: { host: '127.0.0.1', drainTimeoutMs: 5_000 }, plugins: options.plugins ?? DEFAULT_TEST_PLUGINS, ...options.config },
      baseDir: options.baseDir,
      env,
      logger,
    });
  } catch (err) {
    await testDb?.drop().catch(() => undefined);
    if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const { inferenceUrl, controlUrl } = await relay.listen();

  const api = async <T>(method: string, p: string, body?: unknown): Promise<ApiResponse<T>> => {
    const res = await fetch(controlUrl + p, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };

  let closed = false;
  return {
    relay, inferenceUrl, controlUrl, adminToken, masterKey, databaseUrl, dataDir, api,
    async close() {
      if (closed) return;
      closed = true;
      await relay.close();
      await testDb?.drop().catch(() => undefined);
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SeedOptions {
  /** Upstream base URL including its version path, e.g. http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  /** Adapter id: openai or anthropic (or an in-house one). */
  adapter: string;
  /** Client-facing model slug (default: test-model). */
  model?: string;
  /** Upstream model name (default: the slug). */
  upstreamModel?: string;
  /** Host-key secrets to create on the host (default one). */
  hostKeys?: string[];
  /** Extra spec for the policy (e.g. rateLimitIds, payloadLoggingEnabled). */
  policy?: Record<string, unknown>;
  relayKey?: Record<string, unknown>;
  /** Narrow the provider's shapes. */
  shapes?: string[];
  /** The host's spec.options (its adapter's hostOptions: a region, an API version). */
  hostOptions?: Record<string, unknown>;
  model_spec?: Record<string, unknown>;
}

export interface Seeded {
  providerId: string;
  hostId: string;
  modelId: string;
  modelSlug: string;
  policyId: string;
  hostKeyIds: string[];
  relayKeyId: string;
  relayKey: string;
}

async function must<T>(res: Promise<ApiResponse<T>>, what: string): Promise<T> {
  const r = await res;
  if (r.status >= 300) throw new Error(`seeding ${what} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Creates provider, host, model, policy, host keys and a relay key through the admin API. */
export async function seedRoute(relay: Pick<TestRelay, 'api'>, options: SeedOptions): Promise<Seeded> {
  const tag = randomBytes(3).toString('hex');
  const slug = options.model ?? 'test-model';
  const provider = await must<any>(relay.api('POST', '/api/providers', {
    metadata: { displayName: `${options.adapter} ${tag}` }, spec: { adapter: options.adapter, ...(options.shapes ? { shapes: options.shapes } : {}) },
  }), 'provider');
  const host = await must<any>(relay.api('POST', '/api/hosts', {
    metadata: { displayName: `host ${tag}` }, spec: { providerId: provider.metadata.id, baseUrl: options.baseUrl, timeoutMs: 5_000, ...(options.hostOptions ? { options: options.hostOptions } : {}) },
  }), 'host');
  const existing = await relay.api<any>('GET', `/api/models/${slug}`);
  let model: any;
  if (existing.status === 200) {
    model = await must<any>(relay.api('PUT', `/api/models/by-id/${existing.body.metadata.id}`, {
      spec: { bindings: [...existing.body.spec.bindings, { hostId: host.metadata.id, upstreamModel: options.upstreamModel ?? slug }] },
    }), 'model binding');
  } else {
    model = await must<any>(relay.api('POST', '/api/models', {
      metadata: { displayName: slug, slug }, spec: { bindings: [{ hostId: host.metadata.id, upstreamModel: options.upstreamModel ?? slug }], ...(options.model_spec ?? {}) },
    }), 'model');
  }
  const hostKeyIds: string[] = [];
  for (const [i, value] of (options.hostKeys ?? [`sk-upstream-${tag}`]).entries()) {
    const hk = await must<any>(relay.api('POST', '/api/host-keys', {
      metadata: { displayName: `key ${tag} ${i}` }, spec: { hostId: host.metadata.id, valueFrom: { kind: 'stored' }, value, weight: 1000 - i },
    }), 'host key');
    hostKeyIds.push(hk.metadata.id);
  }
  const policy = await must<any>(relay.api('POST', '/api/policies', {
    metadata: { displayName: `policy ${tag}` }, spec: { tier: 'relay', modelIds: [model.metadata.id], ...(options.policy ?? {}) },
  }), 'policy');
  const key = await must<any>(relay.api('POST', '/api/relay-keys', {
    metadata: { displayName: `relay key ${tag}` }, spec: { policyId: policy.metadata.id, ...(options.relayKey ?? {}) },
  }), 'relay key');
  return {
    providerId: provider.metadata.id, hostId: host.metadata.id, modelId: model.metadata.id, modelSlug: slug,
    policyId: policy.metadata.id, hostKeyIds, relayKeyId: key.relayKey.metadata.id, relayKey: key.plaintext,
  };
}

/** Waits until `check` returns true, polling; rejects after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, everyMs = 20): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** An upstream client as a Relay instance makes one, for an adapter's own tests (close it after). */
export function createTestUpstreamClient(): UpstreamClient {
  return new UpstreamClient({ maxConnectionsPerOrigin: 16, connectTimeoutMs: 5_000, keepAliveTimeoutMs: 5_000 });
}
