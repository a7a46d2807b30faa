// Whether dist/ (the compiled service) is fresher than every source file: `relay` runs it only
// then, and tests about the compiled kernel check the same.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(p));
    else if (/\.(ts|sql)$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** @param {string} root the project's folder */
export function compiledIsFresh(root) {
  const stamp = path.join(root, 'dist/.built');
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return ['core', 'plugins', 'bin'].every((d) => newestSourceMtime(path.join(root, d)) <= built);
}
