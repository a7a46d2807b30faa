// The bench scripts' knobs, checked: a misspelt value stops the run with its name instead of
// measuring something other than what was asked for. roundsFromEnv and modeFromEnv are the knobs
// every script on two-relays.ts shares; run.ts reads its own through the readers below.

export type RoundsMode = 'paired' | 'alternate';

export interface RoundsSettings {
  rounds: number;
  warmupS: number;
  durationS: number;
  connections: number;
  gatewayCpu: string;
  loadCpu: string;
}

export function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, least: 0 | 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < least) throw new Error(`${name} must be a whole number of ${least} or more, not ${JSON.stringify(raw)}`);
  return value;
}

export function cpuNumber(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a CPU number (as taskset -c takes it), not ${JSON.stringify(raw)}`);
  return raw;
}

/** A comma-separated list, each entry one of `known`; `fallback` when unset. */
export function listOf<T extends string>(env: NodeJS.ProcessEnv, name: string, fallback: readonly T[], known: readonly T[]): T[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = items.filter((item) => !(known as readonly string[]).includes(item));
  if (unknown.length > 0) throw new Error(`${name}: ${unknown.map((u) => JSON.stringify(u)).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not one of ${known.join(', ')}`);
  return items as T[];
}

/** A comma-separated list of whole numbers of 1 or more; `fallback` when unset. */
export function wholeNumbers(env: NodeJS.ProcessEnv, name: string, fallback: readonly number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  return raw.split(',').map((s) => s.trim()).filter(Boolean).map((item) => wholeNumber({ [name]: item }, name, 0, 1));
}

/**
 * BENCH_ROUNDS, BENCH_WARMUP (6 s), BENCH_DURATION, BENCH_CONNECTIONS (16), BENCH_GATEWAY_CPU (0)
 * and BENCH_LOAD_CPU (1).
 */
export function roundsFromEnv(env: NodeJS.ProcessEnv, defaults: { rounds: number; durationS: number }): RoundsSettings {
  return {
    rounds: wholeNumber(env, 'BENCH_ROUNDS', defaults.rounds, 1),
    warmupS: wholeNumber(env, 'BENCH_WARMUP', 6, 0),
    durationS: wholeNumber(env, 'BENCH_DURATION', defaults.durationS, 1),
    connections: wholeNumber(env, 'BENCH_CONNECTIONS', 16, 1),
    gatewayCpu: cpuNumber(env, 'BENCH_GATEWAY_CPU', '0'),
    loadCpu: cpuNumber(env, 'BENCH_LOAD_CPU', '1'),
  };
}

/** BENCH_MODE: `alternate` (the default) or `paired` (two-relays.ts says what each measures). */
export function modeFromEnv(env: NodeJS.ProcessEnv): RoundsMode {
  const raw = env.BENCH_MODE;
  if (raw === undefined || raw === '' || raw === 'alternate') return 'alternate';
  if (raw === 'paired') return 'paired';
  throw new Error(`BENCH_MODE must be "alternate" or "paired", not ${JSON.stringify(raw)}`);
}
