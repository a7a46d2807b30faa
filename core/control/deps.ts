// What the control plane's routes are given by the kernel.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RelayConfig } from '../config/schema.ts';
import type { Database } from '../db/types.ts';
import type { CatalogStore } from '../catalog/store.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import type { SettingsStore } from '../settings/store.ts';
import type { HostKeyEnvironment } from '../crypto/host-key-env.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { Hooks } from '../plugins/registry.ts';
import type { LoadedPlugin } from '../plugins/loader.ts';
import type { Observer } from '../observer/observer.ts';
import type { KeyHealth } from '../pipeline/key-health.ts';
import type { LastUsed } from '../pipeline/last-used.ts';

import type { BudgetGuard } from '../budgets/budget-guard.ts';
import type { BudgetAlerts } from '../budgets/budget-alerts.ts';

export interface ControlDeps {
  config: RelayConfig;
  log: Logger;
  db: Database;
  store: CatalogStore;
  sync: CatalogSync;
  settings: SettingsStore;
  sealer: Sealer;
  /** Which environment variables host keys may name (checked when one is written). */
  hostKeyEnv: HostKeyEnvironment;
  hooks: Hooks;
  observer: Observer;
  health: KeyHealth;
  metrics: Registry;
  version: string;
  /** RELAY_ADMIN_TOKEN, the break-glass credential; null when unset. */
  adminToken: string | null;
  /** RELAY_METRICS_TOKEN, the scrape-only credential for GET /metrics; null when unset. */
  metricsToken?: string | null;
  /** Budget spend as this instance counts it (GET /api/budgets/{id}/status). */
  budgets: BudgetGuard;
  /** Budget alerts this deployment recorded (GET /api/budgets/{id}/alerts); absent in tests that build a control plane without one. */
  budgetAlerts?: BudgetAlerts;
  /** When each relay key was last accepted (GET /api/relay-keys/last-used). */
  relayKeyLastUsed: LastUsed;
  /** When each host key was last sent upstream (GET /api/host-keys/last-used). */
  hostKeyLastUsed: LastUsed;
  /** Plugins in load order (filled once loading finished). */
  plugins: () => LoadedPlugin[];
}
