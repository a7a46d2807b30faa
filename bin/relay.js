#!/usr/bin/env node
// The `relay` command. It runs the compiled service in dist/ when that build is fresher than
// every source file (npm ci builds it; so does `npm run build`), and the TypeScript sources
// through tsx's loader otherwise (development), or when RELAY_FROM_SOURCE=1.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// V8 allocates objects from an allocation site straight into old space once most of them survive
// a young collection ("pretenuring"). In Relay that decision is wrong: sites whose objects live
// for one request got tenured (under load, or from startup's long-lived objects), after which
// every request's objects from them went to old space and died there. One connection, chat, 5 s
// (--trace-gc): old space grew 1.2 MB every 75 ms, scavenges took 2.5-3.8 ms and a full
// collection came every 0.7 s; without pretenuring old space stayed flat, scavenges took 0.4-0.9
// ms, and p90 latency fell 1.6-1.9 -> 0.37-0.47 ms. `npm run bench:compare` (16 connections): chat 1.070x,
// the messages stream 1.041x, the agent turn 1.011x, the translated stream 0.984x (noise: 0.96-1.00).
// Set before any of the service is loaded; RELAY_V8_PRETENURING=1 keeps V8's default.
if (process.env.RELAY_V8_PRETENURING !== '1') setFlagsFromString('--no-allocation-site-pretenuring');

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
  await import('./relay-cli.ts');
}
