#!/usr/bin/env node
// The `relay` command. It runs the compiled service in dist/ when that build is fresher than
// every source file (npm ci builds it; so does `npm run build`), and the TypeScript sources
// through tsx's loader otherwise (development), or when RELAY_FROM_SOURCE=1; then in-house
// plugins' `relay-gateway` imports reach those sources too (source-conditions.mjs).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function newestSourceMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(p));
    else if (/\.(ts|sql)$/.test(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function compiledIsFresh() {
  const stamp = path.join(root, 'dist/.built');
  if (process.env.RELAY_FROM_SOURCE === '1' || !existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return ['core', 'plugins', 'bin'].every((d) => newestSourceMtime(path.join(root, d)) <= built);
}

if (compiledIsFresh()) {
  await import('../dist/bin/relay-cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { register: registerHooks } = await import('node:module');
  registerHooks('./source-conditions.mjs', import.meta.url);
  await import('./relay-cli.ts');
}
