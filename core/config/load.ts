// Loads the config file: YAML or JSON, ${ENV} substitution, TypeBox validation with the
// JSON pointer of the first problem. User errors are StartupErrors (no stack trace).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { StartupError } from '../errors.ts';
import { firstProblem } from '../http/validate.ts';
import { RelayConfigSchema, type RelayConfig } from './schema.ts';

export interface LoadedConfig {
  config: RelayConfig;
  /** Absolute path of the file, or null for an in-memory config. */
  file: string | null;
  /** The environment variables the config substitutes (${NAME}), set or not. */
  envNames: ReadonlySet<string>;
  /** Directory that relative plugin paths resolve against. */
  baseDir: string;
}

type Env = Record<string, string | undefined>;

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces ${VAR} and ${VAR:-default} in every string of the tree; adds each VAR to `names`. */
export function substituteEnv(value: unknown, env: Env, where: string, pointer = '', names?: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REFERENCE, (_m, name: string, fallback: string | undefined) => {
      names?.add(name);
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new StartupError(`${where}: ${pointer || '/'}: environment variable ${name} is not set (use \${${name}:-default} for a default)`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, where, `${pointer}/${i}`, names));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const disabled = PLUGIN_ENTRY.test(pointer) && isOff(substituteEnv((value as Record<string, unknown>).enabled, env, where, `${pointer}/enabled`, names));
    for (const [k, v] of Object.entries(value)) {
      // A disabled plugin's options are never read, so the variables they name need not be set.
      out[k] = disabled && k === 'options' ? collectEnvNames(v, names) : substituteEnv(v, env, where, `${pointer}/${k}`, names);
    }
    return out;
  }
  return value;
}

const PLUGIN_ENTRY = /^\/plugins\/\d+$/;
const isOff = (enabled: unknown): boolean => enabled === false || enabled === 'false';

/** Leaves the tree as written, adding the variables it names to `names`. */
function collectEnvNames(value: unknown, names?: Set<string>): unknown {
  if (typeof value === 'string') for (const m of value.matchAll(ENV_REFERENCE)) names?.add(m[1]!);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) collectEnvNames(v, names);
  return value;
}

/** Parses, substitutes and validates a config object; the variables it substitutes are added to `envNames`. */
export function resolveConfig(raw: unknown, env: Env, where: string, envNames?: Set<string>): RelayConfig {
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new StartupError(`${where}: /: the config must be a mapping (an object)`);
  const substituted = substituteEnv(raw, env, where, '', envNames);
  const withDefaults = Value.Default(RelayConfigSchema, Value.Convert(RelayConfigSchema, substituted));
  const problem = firstProblem(RelayConfigSchema, withDefaults);
  if (problem) throw new StartupError(`${where}: ${problem.pointer}: ${describe(problem.message, problem.pointer)}`);
  const config = withDefaults as RelayConfig;
  applyEnvOverrides(config, env, where);
  return config;
}

function describe(message: string, pointer: string): string {
  return message === 'unknown field' ? `unknown key "${pointer.split('/').pop()}"` : message;
}

function applyEnvOverrides(config: RelayConfig, env: Env, where: string): void {
  const port = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new StartupError(`${where}: ${name}=${v} is not a port number`);
    return n;
  };
  config.server.port = port('RELAY_PORT') ?? config.server.port;
  config.server.controlPort = port('RELAY_CONTROL_PORT') ?? config.server.controlPort;
  if (env.DATABASE_URL) config.database.url = env.DATABASE_URL;
  if (env.RELAY_DATA_DIR) config.dataDir = env.RELAY_DATA_DIR;
  if (env.VALKEY_URL) config.valkey.url = env.VALKEY_URL;
}

export function loadConfigFile(file: string, env: Env = process.env): LoadedConfig {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    // A relative default (config/relay.yaml) read from another directory is the common way to get here.
    const hint = code === 'ENOENT' ? ': no such file; name one with --config FILE or RELAY_CONFIG' : '';
    throw new StartupError(`${abs}: cannot read the config file (${code})${hint}`);
  }
  let raw: unknown;
  try {
    raw = abs.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new StartupError(`${abs}: not valid ${abs.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
  const envNames = new Set<string>();
  return { config: resolveConfig(raw, env, abs, envNames), file: abs, envNames, baseDir: path.dirname(abs) };
}
