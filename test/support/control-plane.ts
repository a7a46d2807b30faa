// Boots the control listener alone, with the real kernel pieces (catalog store and sync,
// settings, sealer, observer, key health) on a throwaway Postgres database, for the control
// plane's HTTP tests. Several instances may share one database (`database` option).
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { CatalogStore } from '../../core/catalog/store.ts';
import { CatalogSync } from '../../core/catalog/sync.ts';
import { Value } from '@sinclair/typebox/value';
import { RelayConfigSchema, type RelayConfig } from '../../core/config/schema.ts';
import { SECURITY_SCHEMES, registerControlPlane, upsertAdminUser, type ControlPlaneOptions } from '../../core/control/index.ts';
import { HostKeyEnvironment } from '../../core/crypto/host-key-env.ts';
import { Sealer, generateMasterKey, parseMasterKey } from '../../core/crypto/sealing.ts';
import { migrate } from '../../core/db/migrate.ts';
import { PostgresDatabase } from '../../core/db/postgres.ts';
import { createObserver, type Observer } from '../../core/observer/observer.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { LastUsed } from '../../core/pipeline/last-used.ts';
import { Hooks } from '../../core/plugins/registry.ts';
import { createListener } from '../../core/server/listeners.ts';
import { SettingsStore } from '../../core/settings/store.ts';
import { createOpenAIAdapter } from '../../plugins/vendor-openai/adapter.ts';
import { DEFAULT_ANTHROPIC_VERSION, createAnthropicAdapter } from '../../plugins/vendor-anthropic/adapter.ts';

export const ADMIN_URL = process.env.RELAY_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the machine's Postgres. */
export async function createTestDatabase(prefix = 'relay_ctl'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface ControlInstance {
  url: string;
  app: FastifyInstance;
  db: PostgresDatabase;
  store: CatalogStore;
  sync: CatalogSync;
  settings: SettingsStore;
  observer: Observer;
  health: KeyHealth;
  sealer: Sealer;
  adminToken: string;
  masterKey: string | null;
  close(): Promise<void>;
}

export interface StartControlOptions {
  databaseUrl: string;
  /** false: no RELAY_MASTER_KEY. A string: that key. Default: a fresh key. */
  masterKey?: string | false;
  adminToken?: string;
  /** RELAY_METRICS_TOKEN (default: none). */
  metricsToken?: string;
  config?: Partial<RelayConfig['admin']>;
  /** server.* settings of the listener (e.g. trustProxy). */
  server?: Partial<RelayConfig['server']>;
  control?: ControlPlaneOptions;
  /** Backend ids to load as no-op backends. Default usage [file, postgres], payload [file]. */
  usageBackends?: string[];
  payloadBackends?: string[];
  /** Runs on the listener before the control plane registers (e.g. an onRoute collector). */
  beforeControl?: (app: FastifyInstance) => void;
  /** Where log lines go (to check that no secret is logged). Default: nowhere. */
  logStream?: { write(line: string): void };
}

export async function startControl(options: StartControlOptions): Promise<ControlInstance> {
  const log = options.logStream
    ? pino({ level: 'trace' }, options.logStream)
    : pino({ level: process.env.RELAY_TEST_LOG ?? 'silent' });
  const config = Value.Default(RelayConfigSchema, { admin: { ...options.config }, server: { ...options.server } }) as RelayConfig;
  const masterKey = options.masterKey === false ? null : options.masterKey ?? generateMasterKey();
  const sealer = new Sealer(masterKey ? parseMasterKey(masterKey) : null);
  const db = new PostgresDatabase(options.databaseUrl, log);
  await migrate(db);
  const store = new CatalogStore(db);
  const sync = new CatalogSync(db, store, log, { checkIntervalMs: 60_000 });
  await sync.start();
  const settings = new SettingsStore(db, log);
  await settings.start();
  const metrics = new Registry();
  const observer = createObserver({ settings, log, metrics });
  for (const id of options.usageBackends ?? ['file', 'postgres']) observer.addUsageBackend({ id, write: async () => undefined });
  for (const id of options.payloadBackends ?? ['file']) observer.addPayloadBackend({ id, write: async () => undefined });
  const hooks = new Hooks(observer);
  // The two shipped vendor adapters: providers must name a loaded one.
  hooks.addVendorAdapter(createOpenAIAdapter('openai'));
  hooks.addVendorAdapter(createAnthropicAdapter('anthropic', DEFAULT_ANTHROPIC_VERSION));
  const health = new KeyHealth({ redis: null, log });
  const lastUsed = new LastUsed(db, log, 'relay-keys');
  const hostKeyLastUsed = new LastUsed(db, log, 'host-keys');
  const adminToken = options.adminToken ?? `adm_${randomBytes(24).toString('base64url')}`;
  const app = await createListener({
    config, log, title: 'Relay control API', version: '0.0.0-test', securitySchemes: SECURITY_SCHEMES,
    renderError: (_request, reply, err) => {
      if (err.headers) reply.headers(err.headers);
      void reply.code(err.status).type('application/json').send({ error: err.toBody() });
    },
  });
  options.beforeControl?.(app);
  await registerControlPlane(app, {
    config, log, db, store, sync, settings, sealer, hostKeyEnv: new HostKeyEnvironment(process.env), hooks, observer, health, metrics,
    budgets: new BudgetGuard({ snapshot: () => sync.snapshot(), readSpend: async () => null, log }), relayKeyLastUsed: lastUsed, hostKeyLastUsed,
    version: '0.0.0-test', adminToken, metricsToken: options.metricsToken ?? null, plugins: () => [],
  }, options.control);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    app, db, store, sync, settings, observer, health, sealer, adminToken, masterKey,
    async close() {
      await app.close();
      await lastUsed.close();
      await hostKeyLastUsed.close();
      sync.stop();
      await observer.close();
      await health.close();
      await db.close();
    },
  };
}

export async function addAdminUser(instance: ControlInstance, username: string, password: string): Promise<void> {
  await upsertAdminUser(instance.db, username, password);
}

/** A small JSON client for one instance. */
export function client(base: string, auth: { token?: string; cookie?: string; csrf?: boolean } = {}) {
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const h: Record<string, string> = { ...headers };
    if (auth.token) h.authorization = `Bearer ${auth.token}`;
    if (auth.cookie) h.cookie = auth.cookie;
    if (auth.csrf) h['x-relay-csrf'] = '1';
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json: any = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    return { status: res.status, headers: res.headers, json, text };
  };
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}
