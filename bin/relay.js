#!/usr/bin/env node
// The `relay` command. It runs the compiled service in dist/ when that build is fresher than
// every source file (npm install builds it; so does `npm run build`), and the TypeScript sources
// through tsx's loader otherwise (development), or when RELAY_FROM_SOURCE=1; then in-house
// plugins' `relay-gateway` imports reach those sources too (source-conditions.mjs).
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledIsFresh } from './compiled-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.env.RELAY_FROM_SOURCE !== '1' && compiledIsFresh(root)) {
  await import('../dist/bin/relay-cli.js');
} else {
  const tsx = await import('tsx/esm/api').catch(() => {
    process.stderr.write('relay: running from the TypeScript sources (dist/ is missing or older than them, or RELAY_FROM_SOURCE=1) needs tsx, a development dependency: run `npm run build:server`, or install the development dependencies\n');
    process.exit(1);
  });
  tsx.register();
  register('./source-conditions.mjs', import.meta.url);
  await import('./relay-cli.ts');
}
