// Builds a Relay instance: config, database and migrations, catalog snapshot, settings,
// hooks, observer, pipeline, the two listeners, and the plugins the config lists.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import pino, { type Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Redis } from 'ioredis';
import type { RelayConfig } from '../config/schema.ts';
import { loadConfigFile, resolveConfig, type LoadedConfig } from '../config/load.ts';
import { embeddedDatabaseDir, openDatabase } from '../db/open.ts';
import { removeHolder, writeHolder } from '../db/embedded-holder.ts';
import type { Database } from '../db/types.ts';
import { CatalogStore } from '../catalog/store.ts';
import { CatalogSync } from '../catalog/sync.ts';
import { SettingsStore } from '../settings/store.ts';
import { initialSettings } from '../settings/initial.ts';
import { SECURITY_SCHEMES } from '../control/route-security.ts';
import { HostKeyEnvironment, envNamesInPluginOptions } from '../crypto/host-key-env.ts';
import { Sealer, parseMasterKey } from '../crypto/sealing.ts';
import { warnConfigSealedUnderPrevious } from '../crypto/rekey.ts';
import { Hooks } from '../plugins/registry.ts';
import { loadPlugins, type LoadedPlugin } from '../plugins/loader.ts';
import type { RelayContext } from '../plugins/context.ts';
import { createObserver, type Observer } from '../observer/observer.ts';
import { KeyHealth } from '../pipeline/key-health.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import { BindingMeter } from '../pipeline/binding-meter.ts';
import { createRateLimiter } from '../pipeline/rate-limit.ts';
import { principalForRelayKey } from '../pipeline/relay-key-auth.ts';
import { LastUsed } from '../pipeline/last-used.ts';
import { AuditRetention } from '../control/audit-retention.ts';
import { registerControlPlane } from '../control/index.ts';
import { UpstreamClient } from '../http/upstream-client.ts';
import { registerUpstreamMetrics } from '../http/upstream-metrics.ts';
import { BodyGuard } from '../http/body-guard.ts';
import { firstProblem } from '../http/validate.ts';
import type { RelayError } from '../errors.ts';
import { createListener } from './listeners.ts';
import { registerHeapMetrics } from './heap-metrics.ts';
import { registerHealthRoutes } from './health-routes.ts';
import { startCatalog } from './catalog-start.ts';
import { checkSelectedBackends } from './backend-check.ts';
import { LOG_REDACT_PATHS } from './redact.ts';
import { valkeyClientOptions, waitForValkey } from './valkey-options.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { registerBudgetMetrics } from '../budgets/budget-metrics.ts';
import { BudgetGuard } from '../budgets/budget-guard.ts';
import { budgetSpendFromLog } from '../budgets/spend-from-log.ts';
import { registerAllowanceRoute } from '../budgets/allowance-route.ts';
import { ValkeySpend } from '../budgets/valkey-spend.ts';
import { BudgetAlerts } from '../budgets/budget-alerts.ts';
import { BudgetAlertStore } from '../budgets/alert-store.ts';
import { ValkeyAlertClaims } from '../budgets/valkey-alert-claims.ts';
import { CatalogFileService } from '../catalog-file/service.ts';
import { applyCatalogFileAtStart } from './catalog-file-start.ts';
import { ResponsesStateStore } from '../responses-state/store.ts';

export const VERSION: string = (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export interface CreateRelayOptions {
  /** A config file path. */
  configFile?: string;
  /** Or an in-memory config (tests); `baseDir` resolves relative plugin paths. */
  config?: unknown;
  baseDir?: string;
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Apply the config's catalog.file at start (default true; `relay catalog` opens the database without). */
  applyCatalogFile?: boolean;
}

export interface Relay {
  config: RelayConfig;
  log: Logger;
  db: Database;
  store: CatalogStore;
  sync: CatalogSync;
  settings: SettingsStore;
  observer: Observer;
  hooks: Hooks;
  health: KeyHealth;
  inference: FastifyInstance;
  /** The instance's upstream HTTP client (undici). */
  upstream: UpstreamClient;
  control: FastifyInstance;
  plugins: LoadedPlugin[];
  /** The catalog as a file: export and apply through the admin API's layer. */
  catalogFile: CatalogFileService;
  /** Starts listening; returns the two base URLs. */
  listen(): Promise<{ inferenceUrl: string; controlUrl: string }>;
  /** Stops accepting, drains in-flight requests up to the bound, flushes, closes. */
  close(): Promise<void>;
}

export async function createRelay(options: CreateRelayOptions): Promise<Relay> {
  const env = options.env ?? process.env;
  const inMemoryEnvNames = new Set<string>();
  const loaded: LoadedConfig = options.configFile
    ? loadConfigFile(options.configFile, env)
    : { config: resolveConfig(options.config ?? {}, env, '<config>', inMemoryEnvNames), file: null, envNames: inMemoryEnvNames, baseDir: options.baseDir ?? process.cwd() };
  const { config } = loaded;
  const where = loaded.file ?? '<config>';

  const log = options.logger ?? pino({ level: config.log.level, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } });
  const dataDir = path.resolve(config.dataDir);

  const sealer = new Sealer(
    env.RELAY_MASTER_KEY ? parseMasterKey(env.RELAY_MASTER_KEY) : null,
    env.RELAY_MASTER_KEY_PREVIOUS ? parseMasterKey(env.RELAY_MASTER_KEY_PREVIOUS, 'RELAY_MASTER_KEY_PREVIOUS') : null,
  );
  if (!sealer.enabled) log.warn('RELAY_MASTER_KEY is not set: host keys can only read their value from the environment, and budget alert webhook URLs and host header values are stored unsealed');

  const db = await openDatabase({ url: config.database.url, dataDir, log, queryTimeoutMs: config.database.queryTimeoutMs });
  const closers: Array<() => Promise<void> | void> = [];
  try {
    warnConfigSealedUnderPrevious(config, sealer, log);
    const store = new CatalogStore(db);
    const sync = new CatalogSync(db, store, log);
    store.setAfterWrite((kind, id) => sync.refresh(kind, id));
    closers.push(() => sync.stop());
    const settings = new SettingsStore(db, log, initialSettings(config));
    // Migrations, re-sealing, catalog, settings, first admin; from the local snapshot while Postgres is down.
    closers.push(await startCatalog({ db, databaseUrl: config.database.url, dataDir, store, sync, settings, sealer, env, log }));

    const metrics = new Registry();
    collectDefaultMetrics({ register: metrics, prefix: 'relay_' });
    closers.push(registerHeapMetrics(metrics));
    // Loaded only when configured: ioredis adds ~18 MB of RSS (measured) to an instance without Valkey.
    const redis: Redis | null = config.valkey.url
      ? new (await import('ioredis')).Redis(config.valkey.url, valkeyClientOptions(config.valkey.timeoutMs))
      : null;
    redis?.on('error', (err) => log.warn({ err: err.message }, 'valkey connection error'));
    if (redis) closers.push(async () => { await redis.quit().catch(() => redis.disconnect()); });
    // Commands fail at once until it is connected (no offline queue): start-up's first ones wait for it.
    if (redis) await waitForValkey(redis, config.valkey.timeoutMs);

    const observer = createObserver({ settings, log, metrics });
    const hooks = new Hooks(observer);
    const health = new KeyHealth({ redis, log, breaker: config.health.circuitBreaker, valkeyTimeoutMs: config.valkey.timeoutMs });
    await health.loadShared();
    closers.push(() => health.close());
    const rateLimiter = createRateLimiter({ redis, log, metrics, valkeyCommandTimeoutMs: config.valkey.commandTimeoutMs, valkeyBreakerOpenMs: config.valkey.breakerOpenMs, maxSlotHoldMs: config.rateLimits.maxSlotHoldMs });
    closers.push(() => rateLimiter.close());
    const hostKeyEnv = new HostKeyEnvironment(env, [...loaded.envNames, ...envNamesInPluginOptions(config.plugins)]);
    const upstream = new UpstreamClient({
      maxConnectionsPerOrigin: config.upstream.maxConnectionsPerOrigin,
      connectTimeoutMs: config.upstream.connectTimeoutMs,
      keepAliveTimeoutMs: config.upstream.keepAliveTimeoutMs,
    });
    closers.push(() => upstream.close());
    registerUpstreamMetrics(metrics, upstream);
    const budgetAlerts = new BudgetAlerts({ store: new BudgetAlertStore(db), log, delivery: config.budgets.alerts, sealer, ...(redis ? { claims: new ValkeyAlertClaims(redis) } : {}) });
    closers.push(() => budgetAlerts.close());
    const budgets = new BudgetGuard({ snapshot: () => sync.snapshot(), readSpend: (filter) => budgetSpendFromLog(observer, filter), log,
      reconcileMs: config.budgets.reconcileMs, readTimeoutMs: config.budgets.readTimeoutMs, ...(redis ? { shared: new ValkeySpend(redis) } : {}), onCounted: (budget, status) => budgetAlerts.check(budget, status) });
    // Spend is added after each response (a recorder runs off the response path).
    observer.addRecorder('budgets', (event) => budgets.record(event));
    registerBudgetMetrics(metrics, budgets, () => sync.snapshot());
    const meter = new BindingMeter({ redis, log });
    closers.push(async () => meter.close());
    const responsesState = new ResponsesStateStore(db, sealer, log, config.responsesState);
    closers.push(() => responsesState.close());
    if (config.admin.auditRetentionDays !== undefined) {
      const auditRetention = new AuditRetention(db, log, config.admin.auditRetentionDays);
      closers.push(async () => auditRetention.close());
    }
    const relayKeyLastUsed = new LastUsed(db, log, 'relay-keys');
    closers.push(() => relayKeyLastUsed.close());
    const hostKeyLastUsed = new LastUsed(db, log, 'host-keys');
    closers.push(() => hostKeyLastUsed.close());
    const pipeline = createPipeline({
      hooks, sync, observer, health, rateLimiter, budgets, sealer, hostKeyEnv, log, metrics, upstream, meter, hostKeyLastUsed,
      writeStallMs: config.server.writeStallTimeoutMs,
    });

    let plugins: LoadedPlugin[] = [];
    const renderInference = (request: FastifyRequest, reply: FastifyReply, err: RelayError) => {
      const config = request.routeOptions.config;
      const shape = config?.shape;
      if (shape && config.recordedByPipeline) pipeline.recordRejected(request.id, null, shape, err, request.principal ?? null, request.headers);
      pipeline.sendError(reply, shape ?? 'canonical', err);
    };
    const renderControl = (_request: FastifyRequest, reply: FastifyReply, err: RelayError) => {
      if (err.headers) reply.headers(err.headers);
      void reply.code(err.status).type('application/json').send({ error: err.toBody() });
    };

    const bodyGuard = new BodyGuard({
      totalTimeoutMs: config.server.bodyTimeoutMs,
      idleTimeoutMs: config.server.bodyIdleTimeoutMs,
      memoryLimitBytes: config.server.bodyMemoryLimitBytes,
    });
    const inference = await createListener({ config, log, title: 'Relay inference API', version: VERSION, renderError: renderInference, inference: { bodyGuard },
      securitySchemes: { relayKey: { type: 'http', scheme: 'bearer', description: 'A relay key' } } });
    const control = await createListener({ config, log, title: 'Relay control API', version: VERSION, renderError: renderControl,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'RELAY_ADMIN_TOKEN' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'relay_session' },
        metricsToken: SECURITY_SCHEMES.metricsToken,
      } });

    // Every request is logged (SPEC): what the pipeline does not record (model lists, the HEAD
    // probe, unknown paths) is recorded once answered. The probes and /openapi.json are the
    // listener's own, not the API's, and are not.
    inference.addHook('onResponse', (request, reply, done) => {
      const config = request.routeOptions.config;
      if (config?.shape ? !config.recordedByPipeline : request.is404) pipeline.recordAnswered(request, reply);
      done();
    });
    // Inference endpoints authenticate from the headers, before the body is read: a request
    // without a valid key costs no body, and its connection closes with the 401.
    inference.addHook('onRequest', (request, reply, done) => {
      const config = request.routeOptions.config;
      if (!config?.shape || !config.recordedByPipeline) return done();
      const refuse = (err: unknown) => {
        reply.header('connection', 'close');
        done(err as Error);
      };
      let found: ReturnType<typeof pipeline.authenticateInference>;
      try {
        found = pipeline.authenticateInference(request, config.shape);
      } catch (err) {
        return refuse(err);
      }
      // A key found from the snapshot needs no promise; an authenticator that looks elsewhere returns one.
      if (!(found instanceof Promise)) {
        request.principal = found;
        return done();
      }
      void found.then((principal) => {
        request.principal = principal;
        done();
      }, refuse);
    });
    registerHealthRoutes(inference, { sync });
    registerAllowanceRoute(inference, {
      budgets, snapshot: () => sync.snapshot(),
      authenticate: (request) => pipeline.authenticate(request, 'canonical'), reachableModels: (principal) => pipeline.reachableModels(principal),
    });
    await registerControlPlane(control, {
      config, log, db, store, sync, settings, sealer, hostKeyEnv, hooks, observer, health, metrics, budgets, budgetAlerts, relayKeyLastUsed, hostKeyLastUsed, version: VERSION,
      adminToken: env.RELAY_ADMIN_TOKEN ? env.RELAY_ADMIN_TOKEN : null,
      metricsToken: env.RELAY_METRICS_TOKEN ? env.RELAY_METRICS_TOKEN : null,
      plugins: () => plugins,
    });

    const onCloseFns: Array<() => Promise<void> | void> = [];
    const context: RelayContext = {
      log, inference, control, hooks, pipeline, settings, metrics, dataDir,
      sql: db,
      valkey: () => {
        if (!redis) return null;
        const own = redis.duplicate();
        own.on('error', (err) => log.warn({ err: err.message }, 'valkey connection error (a plugin\'s)'));
        closers.push(async () => { await own.quit().catch(() => own.disconnect()); });
        return own;
      },
      snapshot: () => sync.snapshot(),
      responsesState,
      openSecret: (sealed) => sealer.open(sealed),
      principalForRelayKey: (plaintext) => {
        const principal = principalForRelayKey(sync.snapshot(), plaintext);
        relayKeyLastUsed.note(principal.relayKey.metadata.id);
        return principal;
      },
      onClose: (fn) => { onCloseFns.push(fn); },
    };

    plugins = await loadPlugins(config.plugins, loaded.baseDir, where);
    for (const { plugin, options: pluginOptions } of plugins) {
      // fastify-plugin metadata lets Fastify check names and dependencies as well; the loader
      // already sorted them, so a failure here is a bug, not a user error.
      const wrapped = fp(async () => {
        await plugin.register({ ...context, log: log.child({ plugin: plugin.name }) }, pluginOptions as never);
      }, { name: plugin.name, dependencies: plugin.dependencies, fastify: '5.x' });
      inference.register(wrapped);
    }
    store.setHostOptionsCheck((adapterId, { options, baseUrl }) => {
      const adapter = hooks.adapters.get(adapterId);
      if (!adapter) return null;
      const urlProblem = adapter.baseUrlProblem?.(baseUrl);
      if (urlProblem) return { pointer: '/baseUrl', message: urlProblem };
      if (!adapter.hostOptions) {
        return Object.keys(options).length === 0 ? null : { pointer: '/options', message: `the ${adapterId} adapter takes no host options` };
      }
      return firstProblem(adapter.hostOptions, options, '/options');
    });
    await inference.ready();
    await control.ready();
    const catalogFile = new CatalogFileService({ store, sealer, hostKeyEnv, adapters: hooks.adapters });
    try {
      checkSelectedBackends(config, where, observer.backends(), settings, log);
      if (options.applyCatalogFile !== false) await applyCatalogFileAtStart(config, loaded.baseDir, catalogFile, sync, db, log);
    } catch (err) {
      // The plugins are registered: close them (and their pools) the way shutdown does.
      await Promise.allSettled([inference.close(), control.close()]);
      await observer.close();
      for (const fn of onCloseFns.reverse()) await safely(fn, log);
      throw err;
    }

    // Every budget's spend is read now, with the usage backends loaded, not at its first request.
    budgets.warm();

    let closing: Promise<void> | null = null;
    // On the embedded database, where this instance answers: relay CLI commands on the directory go through it.
    let holderDir: string | null = null;
    const relay: Relay = {
      config, log, db, store, sync, settings, observer, hooks, health, inference, upstream, control, plugins, catalogFile,
      async listen() {
        await inference.listen({ host: config.server.host, port: config.server.port });
        await control.listen({ host: config.server.controlHost, port: config.server.controlPort });
        const controlUrl = baseUrl(control);
        if (db.kind === 'pglite') {
          holderDir = embeddedDatabaseDir(dataDir);
          writeHolder(holderDir, controlUrl);
        }
        return { inferenceUrl: baseUrl(inference), controlUrl };
      },
      close() {
        closing ??= shutdown();
        return closing;
      },
    };

    const shutdown = async (): Promise<void> => {
      // The control port stops taking connections now: a CLI command must not be sent to it.
      if (holderDir) removeHolder(holderDir);
      const drain = Promise.allSettled([inference.close(), control.close()]);
      const bound = config.server.drainTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        drain.then(() => false),
        new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), bound); }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        log.warn({ drainTimeoutMs: bound }, 'in-flight requests did not finish within the drain bound; closing their connections');
        inference.server.closeAllConnections();
        control.server.closeAllConnections();
        await drain;
      }
      await observer.close();
      for (const fn of onCloseFns.reverse()) await safely(fn, log);
      for (const fn of closers.reverse()) await safely(fn, log);
      await db.close();
    };
    return relay;
  } catch (err) {
    for (const fn of closers.reverse()) await safely(fn, log);
    await db.close().catch(() => undefined);
    throw err;
  }
}

async function safely(fn: () => Promise<void> | void, log: Logger): Promise<void> {
  try {
    await fn();
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err) }, 'error during shutdown');
  }
}

function baseUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
