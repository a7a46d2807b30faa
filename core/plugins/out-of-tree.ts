// What an out-of-tree plugin (loaded by path or package name) must be when the kernel runs
// compiled: JavaScript whose `relay-gateway` imports resolve through Node to this package's
// exports (dist/, the same modules the kernel runs). No TypeScript loader and no resolve hook
// in production; running from the sources (development), bin/relay.js registers both.
import path from 'node:path';
import { StartupError } from '../errors.ts';

export const RUNS_COMPILED = import.meta.url.endsWith('.js');

/** Which of a plugin folder's files to try, in order: compiled JavaScript first when the kernel is. */
export function pluginFileCandidates(abs: string): string[] {
  const [first, second] = RUNS_COMPILED ? ['js', 'ts'] : ['ts', 'js'];
  return [abs, `${abs}.${first}`, `${abs}.${second}`, path.join(abs, `index.${first}`), path.join(abs, `index.${second}`)];
}

const TYPESCRIPT = /\.[cm]?ts$/;

/** The start-up error for a TypeScript plugin under the compiled kernel, or null when it may load. */
export function typeScriptPluginProblem(file: string | null, where: string, pointer: string, use: string): StartupError | null {
  if (!RUNS_COMPILED || (file !== null && !TYPESCRIPT.test(file))) return null;
  return new StartupError(
    `${where}: ${pointer}/use: plugin "${use}" is TypeScript${file ? ` (${file})` : ''}, and Relay runs compiled JavaScript: ` +
      'compile the plugin (tsc; see plugins/README.md, "Deploying an in-house plugin"), or run Relay from its sources with RELAY_FROM_SOURCE=1 while developing it',
  );
}
