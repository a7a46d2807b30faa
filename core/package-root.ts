// The project's root folder (where package.json is), found by walking up from this module, so
// that paths to package.json, admin-ui/dist and the like hold both for the TypeScript sources
// and for the compiled build in dist/.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${start}`);
    dir = parent;
  }
}

export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
