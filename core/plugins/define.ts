// definePlugin: how every plugin, built-in or in-house, declares itself.
import type { Static, TSchema } from '@sinclair/typebox';
import type { RelayContext } from './context.ts';

export type PluginKind = 'wire' | 'vendor' | 'auth' | 'log' | 'payload' | 'agent' | 'admin' | 'other';

export interface PluginDefinition<S extends TSchema = TSchema> {
  /** Unique name; built-ins are named `<kind>-<name>` after their folder. */
  name: string;
  kind: PluginKind;
  description?: string;
  /** TypeBox schema of the options; defaults fill in, unknown keys are an error. */
  options: S;
  /** Names of plugins that must be loaded (and registered) before this one. */
  dependencies?: string[];
  register(relay: RelayContext, options: Static<S>): Promise<void> | void;
  /**
   * Ids of the usage and payload backends register() adds with these options, so that `relay
   * check` (which registers nothing) can tell whether the config's selected backends are loaded.
   */
  backends?(options: Static<S>): { usage?: string[]; payload?: string[] };
}

export const PLUGIN_MARK = Symbol.for('relay.plugin');

export interface RelayPlugin<S extends TSchema = TSchema> extends PluginDefinition<S> {
  readonly [PLUGIN_MARK]: true;
}

export function definePlugin<S extends TSchema>(definition: PluginDefinition<S>): RelayPlugin<S> {
  if (!/^[a-z0-9@][a-z0-9@/._-]*$/.test(definition.name)) {
    throw new TypeError(`definePlugin: invalid plugin name ${JSON.stringify(definition.name)}`);
  }
  return Object.freeze({ ...definition, dependencies: definition.dependencies ?? [], [PLUGIN_MARK]: true as const });
}

export function isRelayPlugin(value: unknown): value is RelayPlugin {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PLUGIN_MARK] === true;
}
