// Resolves, validates and orders the plugins a config lists. A built-in plugin is loaded by
// name exactly as an in-house one is by path or package name: core knows none of them.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { StartupError } from '../errors.ts';
import { firstProblem } from '../http/validate.ts';
import type { PluginEntry } from '../config/schema.ts';
import { isRelayPlugin, type RelayPlugin } from './define.ts';
import { foreignGatewayProblem } from './gateway-copy.ts';
import { pluginFileCandidates, typeScriptPluginProblem } from './out-of-tree.ts';

const BUILTIN_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../plugins');

export interface LoadedPlugin {
  plugin: RelayPlugin;
  options: Record<string, unknown>;
  /** Where it came from: `builtin`, a file path, or a package name. */
  source: string;
  /** Index in the config's plugin list (for error pointers). */
  index: number;
}

function isPathLike(use: string): boolean {
  return use.startsWith('./') || use.startsWith('../') || path.isAbsolute(use);
}

async function importPlugin(use: string, baseDir: string, where: string, pointer: string): Promise<{ plugin: RelayPlugin; source: string }> {
  let specifier: string;
  let source: string;
  if (isPathLike(use)) {
    const abs = path.resolve(baseDir, use);
    const found = pluginFileCandidates(abs).find((c) => existsSync(c) && !isDirectory(c));
    if (!found) throw new StartupError(`${where}: ${pointer}/use: no plugin at ${abs}`);
    const problem = typeScriptPluginProblem(found, where, pointer, use) ?? foreignGatewayProblem(found, where, pointer, use);
    if (problem) throw problem;
    specifier = pathToFileURL(found).href;
    source = found;
  } else if (builtinEntry(use)) {
    specifier = pathToFileURL(builtinEntry(use)!).href;
    source = 'builtin';
  } else {
    specifier = use;
    source = use;
    const file = installedFile(use);
    const problem = file === null ? null : foreignGatewayProblem(file, where, pointer, use);
    if (problem) throw problem;
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(specifier)) as { default?: unknown };
  } catch (err) {
    // A package whose entry is TypeScript, under the compiled kernel (Node 20 does not load .ts).
    const typeScript = (err as NodeJS.ErrnoException)?.code === 'ERR_UNKNOWN_FILE_EXTENSION' ? typeScriptPluginProblem(null, where, pointer, use) : null;
    if (typeScript) throw typeScript;
    // The package itself is missing (not one of its own imports): judged by the name in the
    // message, since the error code differs between Node's resolver and loader hooks.
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(String((err as Error)?.message))?.[1];
    if (!isPathLike(use) && (missing === use || missing?.startsWith(`${use}/`))) {
      throw new StartupError(`${where}: ${pointer}/use: unknown plugin "${use}" (not a built-in plugin, a path, or an installed package)`);
    }
    throw new StartupError(`${where}: ${pointer}/use: plugin "${use}" failed to load: ${(err as Error).message}`);
  }
  if (!isRelayPlugin(mod.default)) {
    throw new StartupError(`${where}: ${pointer}/use: "${use}" does not default-export a plugin made with definePlugin`);
  }
  return { plugin: mod.default, source };
}

/** An installed package plugin's entry file, as Node resolves it from Relay's own folder; null when it does not resolve. */
function installedFile(use: string): string | null {
  try {
    const url = import.meta.resolve(use);
    return url.startsWith('file:') ? fileURLToPath(url) : null;
  } catch {
    return null; // the import below says why
  }
}

/** A built-in plugin's entry: index.ts beside the sources, index.js in the compiled dist/. */
function builtinEntry(name: string): string | null {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) return null;
  for (const file of ['index.ts', 'index.js']) {
    const p = path.join(BUILTIN_DIR, name, file);
    if (existsSync(p)) return p;
  }
  return null;
}

function isDirectory(p: string): boolean {
  return statSync(p).isDirectory();
}

/** Validates options against the plugin's schema; fills defaults; names the pointer on error. */
export function validateOptions(plugin: RelayPlugin, options: unknown, where: string, pointer: string): Record<string, unknown> {
  const input = options ?? {};
  const withDefaults = Value.Default(plugin.options, Value.Convert(plugin.options, Value.Clone(input)));
  const problem = firstProblem(plugin.options, withDefaults, `${pointer}/options`);
  if (problem) {
    const what = problem.message === 'unknown field' ? `unknown option "${problem.pointer.split('/').pop()}"` : problem.message;
    throw new StartupError(`${where}: ${problem.pointer}: ${what} (plugin ${plugin.name})`);
  }
  return withDefaults as Record<string, unknown>;
}

/** Loads every enabled entry, validates options, and returns them sorted by dependencies. */
export async function loadPlugins(entries: PluginEntry[], baseDir: string, where: string): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  const byName = new Map<string, LoadedPlugin>();
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index];
    if (entry.enabled === false) continue;
    const pointer = `/plugins/${index}`;
    const { plugin, source } = await importPlugin(entry.use, baseDir, where, pointer);
    if (byName.has(plugin.name)) throw new StartupError(`${where}: ${pointer}: plugin "${plugin.name}" is listed twice`);
    const item: LoadedPlugin = { plugin, options: validateOptions(plugin, entry.options, where, pointer), source, index };
    loaded.push(item);
    byName.set(plugin.name, item);
  }
  return sortByDependencies(loaded, where);
}

/** Depth-first topological sort; keeps config order where dependencies allow. */
export function sortByDependencies(plugins: LoadedPlugin[], where: string): LoadedPlugin[] {
  const byName = new Map(plugins.map((p) => [p.plugin.name, p]));
  const state = new Map<string, 'visiting' | 'done'>();
  const out: LoadedPlugin[] = [];
  const visit = (p: LoadedPlugin, trail: string[]): void => {
    const name = p.plugin.name;
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name].join(' -> ');
      throw new StartupError(`${where}: plugin dependency cycle: ${cycle}`);
    }
    state.set(name, 'visiting');
    for (const dep of p.plugin.dependencies ?? []) {
      const target = byName.get(dep);
      if (!target) throw new StartupError(`${where}: /plugins/${p.index}: plugin "${name}" depends on "${dep}", which the config does not load`);
      visit(target, [...trail, name]);
    }
    state.set(name, 'done');
    out.push(p);
  };
  for (const p of plugins) visit(p, []);
  return out;
}
