// The control plane: the admin API under /api, plus /metrics and /config.json at the listener
// root. Call registerControlPlane on the control listener before any plugin registers routes
// on it: its hooks (authentication, OpenAPI security, metrics) must be in place first.
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { ControlDeps } from './deps.ts';
import { installAuthGuard } from './auth-guard.ts';
import { registerAuditRoutes } from './audit-routes.ts';
import { AuditTrail } from './audit-store.ts';
import { installAuditTrail } from './audit-trail.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { registerCatalogRoutes } from './catalog-routes.ts';
import { registerCatalogFileRoutes } from './catalog-file-routes.ts';
import { CatalogFileService } from '../catalog-file/service.ts';
import { registerConfigJson } from './config-json.ts';
import { registerControlLiveness } from './control-liveness.ts';
import { registerHealthDetailRoute } from './health-detail-route.ts';
import { hostKeyWriter, registerHostKeyHealthRoute } from './host-key-routes.ts';
import { LoginThrottle, type LoginThrottleOptions } from './login-throttle.ts';
import { registerLogRoutes } from './logs-routes.ts';
import { registerBudgetRoutes } from './budget-routes.ts';
import { budgetWriter } from '../budgets/webhook-sealing.ts';
import { hostWriter } from '../catalog/host-header-sealing.ts';
import { registerBudgetUsageRoutes } from './budget-usage-routes.ts';
import { installControlMetrics } from './metrics.ts';
import { registerOpsRoutes } from './ops-routes.ts';
import { providerWriter } from './provider-writer.ts';
import { registerRelayKeyRoutes } from './relay-key-routes.ts';
import { registerLastUsedRoute } from './last-used-routes.ts';
import { installRouteSecurityDocs } from './route-security.ts';
import { installSecurityHeaders } from './security-headers.ts';
import { SessionStore } from './sessions.ts';
import { registerSettingsRoutes } from './settings-routes.ts';
import { registerUserRoutes } from './user-routes.ts';
import { registerVendorAdapterRoutes } from './vendor-adapter-routes.ts';
import { registerContextWindowRoute } from './context-window-route.ts';
import { rejectUnstorableInput, typeboxValidatorCompiler } from './validator.ts';

export { ensureInitialAdmin, upsertAdminUser } from './admin-users.ts';
export { SECURITY_SCHEMES } from './route-security.ts';
export type { ControlDeps } from './deps.ts';

export interface ControlPlaneOptions {
  /** Tuning of the sign-in throttle (tests shorten it). */
  loginThrottle?: LoginThrottleOptions;
}

export async function registerControlPlane(app: FastifyInstance, deps: ControlDeps, options: ControlPlaneOptions = {}): Promise<void> {
  if (!app.hasDecorator('parseCookie')) await app.register(cookie);
  const secureCookies = deps.config.admin.secureCookies;
  const sessions = new SessionStore(deps.db, deps.config.admin.sessionTtlMinutes);
  const throttle = new LoginThrottle(deps.db, options.loginThrottle);

  // First, so that refusals (401, 403) carry them too.
  installSecurityHeaders(app);
  installRouteSecurityDocs(app);
  installAuthGuard(app, { sessions, adminToken: deps.adminToken, metricsToken: deps.metricsToken ?? null, secureCookies });
  installControlMetrics(app, deps.metrics, deps.sync);
  const audit = new AuditTrail(deps.db);
  installAuditTrail(app, audit, deps.log, () => deps.sync.snapshot());
  // Every control route, plugins' included: no NUL or unpaired surrogate reaches a store, and no
  // nesting deeper than any route takes reaches a schema or a handler (validator.ts).
  app.addHook('preValidation', rejectUnstorableInput);
  registerConfigJson(app, deps);
  registerControlLiveness(app);
  registerLogRoutes(app, deps.observer, { viewersReadPayloads: () => deps.settings.get('payload-logging').viewersReadPayloads, snapshot: () => deps.sync.snapshot() });
  registerBudgetUsageRoutes(app, { observer: deps.observer, budgets: deps.budgets, sync: deps.sync });

  await app.register(async (api) => {
    // Strict TypeBox validation for the admin API's bodies (see validator.ts).
    api.setValidatorCompiler(typeboxValidatorCompiler);
    registerAuthRoutes(api, { db: deps.db, sessions, throttle, secureCookies });
    registerUserRoutes(api, { db: deps.db, throttle });
    registerHostKeyHealthRoute(api, { health: deps.health, sync: deps.sync, sealer: deps.sealer, hostKeyEnv: deps.hostKeyEnv });
    registerCatalogRoutes(api, {
      store: deps.store,
      writers: { 'host-keys': hostKeyWriter(deps.sealer, deps.hostKeyEnv), providers: providerWriter(deps.hooks.adapters), budgets: budgetWriter(deps.sealer), hosts: hostWriter(deps.sealer) },
      customCreate: ['relay-keys'],
      sealer: deps.sealer,
    });
    registerRelayKeyRoutes(api, { store: deps.store });
    registerLastUsedRoute(api, { sync: deps.sync, lastUsed: deps.relayKeyLastUsed });
    registerLastUsedRoute(api, { sync: deps.sync, lastUsed: deps.hostKeyLastUsed });
    registerCatalogFileRoutes(api, {
      catalogFile: new CatalogFileService({ store: deps.store, sealer: deps.sealer, hostKeyEnv: deps.hostKeyEnv, adapters: deps.hooks.adapters }),
    });
    registerSettingsRoutes(api, { settings: deps.settings, observer: deps.observer });
    registerOpsRoutes(api, { version: deps.version, sync: deps.sync });
    registerHealthDetailRoute(api, { db: deps.db, sync: deps.sync });
    registerVendorAdapterRoutes(api, { hooks: deps.hooks });
    registerContextWindowRoute(api, { sync: deps.sync });
    registerBudgetRoutes(api, { budgets: deps.budgets, alerts: deps.budgetAlerts, sync: deps.sync });
    registerAuditRoutes(api, { trail: audit });
  });
}
