#!/usr/bin/env node
// Installs the test-only tools (test/tools/package.json) into test/tools/node_modules when they
// are missing or older than package.json and its lock file; `npm test` runs it first (pretest).
// They live apart from Relay's own dependencies so that running Relay never installs them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const stamp = path.join(here, 'node_modules', '.relay-test-tools');

/** What the installed tree was made from: package.json and the lock file. */
function manifestHash() {
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    const p = path.join(here, file);
    hash.update(existsSync(p) ? readFileSync(p) : '');
  }
  return hash.digest('hex');
}

const wanted = manifestHash();
if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === wanted) process.exit(0);

process.stdout.write('test tools: installing the Codex CLI, Claude Code and chdb into test/tools (once; about 1.2 GB)\n');
// npm install, not npm ci: chdb's optional per-platform packages are not all in the lock file.
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(npm, ['install', '--prefix', here, '--no-audit', '--no-fund'], { stdio: 'inherit', cwd: here });
// The lock file may have been written just now: stamp what is on disk after the install.
writeFileSync(stamp, `${manifestHash()}\n`);
