// The dashboard built for one browser test, into a directory of its own that the admin-ui plugin
// serves (its `root`): tests run two at a time, and one rebuilding admin-ui/dist would empty it
// under the other's browser. The build is part of what these tests check; it takes under a second.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

const BUILD = fileURLToPath(new URL('../../admin-ui/build.mjs', import.meta.url));

/** Builds the dashboard and returns its directory, removed when `t` ends. */
export function buildDashboard(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-dashboard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(process.execPath, [BUILD, '--outdir', dir], { stdio: 'pipe' });
  return dir;
}
