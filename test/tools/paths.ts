// Where the test-only tools (test/tools/package.json) are installed, and how a test loads one.
// `npm test` installs them (test/tools/install.mjs); a single file run with `npx tap` needs
// `npm run test:tools` once.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const TEST_TOOLS_DIR = import.meta.dirname;
export const TEST_TOOLS_MODULES = path.join(TEST_TOOLS_DIR, 'node_modules');
export const TEST_TOOLS_MISSING = 'not installed: `npm test` installs the test tools into test/tools, or run `npm run test:tools`';

const requireFromTools = createRequire(path.join(TEST_TOOLS_DIR, 'package.json'));

/** A test tool's module (e.g. `chdb/connection`), loaded from test/tools/node_modules. */
export async function importTestTool<T>(specifier: string): Promise<T> {
  let resolved: string;
  try {
    resolved = requireFromTools.resolve(specifier);
  } catch {
    throw new Error(`${specifier} is ${TEST_TOOLS_MISSING}`);
  }
  return (await import(pathToFileURL(resolved).href)) as T;
}
