// Whether the config's selected usage and payload backends (usageLogging.backend,
// payloadLogging.backend) are loaded. A selected backend that no plugin provides drops every
// event (relay_log_events_dropped_total{reason="backend_not_loaded"}), so start-up and
// `relay check` refuse it instead of starting quietly.
import type { RelayConfig } from '../config/schema.ts';
import type { LoadedPlugin } from '../plugins/loader.ts';

export type BackendKind = 'usage' | 'payload';

export interface BackendIds {
  usage: string[];
  payload: string[];
}

const FIELD: Record<BackendKind, { pointer: string; key: string; endpoint: string }> = {
  usage: { pointer: '/usageLogging/backend', key: 'usageLogging.backend', endpoint: 'usage-logging' },
  payload: { pointer: '/payloadLogging/backend', key: 'payloadLogging.backend', endpoint: 'payload-logging' },
};

export function selectedBackend(config: Pick<RelayConfig, 'usageLogging' | 'payloadLogging'>, kind: BackendKind): string {
  return kind === 'usage' ? config.usageLogging.backend : config.payloadLogging.backend;
}

/**
 * One line per selected backend that is not among `loaded`. With no backend of a kind loaded
 * at all, nothing is refused: such a config deliberately keeps no usage log or no payloads.
 */
export function backendSelectionProblems(config: Pick<RelayConfig, 'usageLogging' | 'payloadLogging'>, loaded: BackendIds): string[] {
  const problems: string[] = [];
  for (const kind of ['usage', 'payload'] as const) {
    const selected = selectedBackend(config, kind);
    const ids = [...loaded[kind]].sort();
    if (ids.length === 0 || ids.includes(selected)) continue;
    problems.push(`${FIELD[kind].pointer}: the ${kind} backend ${JSON.stringify(selected)} is not loaded (loaded ${kind} backends: ${ids.join(', ')}); `
      + `set ${FIELD[kind].key} to one of them, or load the plugin that provides ${JSON.stringify(selected)}`);
  }
  return problems;
}

/** What the plugins declare they add (`backends()`), and the backend plugins that declare nothing. */
export function declaredBackends(plugins: LoadedPlugin[]): BackendIds & { undeclared: string[] } {
  const out: BackendIds & { undeclared: string[] } = { usage: [], payload: [], undeclared: [] };
  for (const { plugin, options } of plugins) {
    if (!plugin.backends) {
      if (plugin.kind === 'log' || plugin.kind === 'payload') out.undeclared.push(plugin.name);
      continue;
    }
    const ids = plugin.backends(options as never);
    out.usage.push(...(ids.usage ?? []));
    out.payload.push(...(ids.payload ?? []));
  }
  return out;
}

/** The start-up warning for a setting stored at runtime that names a backend not loaded here. */
export function storedSelectionWarning(kind: BackendKind, stored: string, loaded: string[]): string | null {
  if (loaded.length === 0 || loaded.includes(stored)) return null;
  return `the ${kind} backend ${JSON.stringify(stored)} stored with PUT /api/settings/${FIELD[kind].endpoint} is not loaded on this instance `
    + `(loaded: ${[...loaded].sort().join(', ')}); its events are dropped until a loaded one is selected`;
}
