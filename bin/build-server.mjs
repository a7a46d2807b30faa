#!/usr/bin/env node
// Compiles the service (core/, plugins/, bin/) to dist/ with tsc, copies the SQL migrations,
// and stamps the build. `relay start` runs dist/ when it is fresher than every source file:
// compiled modules need no TypeScript loader at run time (about 75 MB less RSS, faster start).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
mkdirSync(path.join(dist, 'core/db/migrations'), { recursive: true });
cpSync(path.join(root, 'core/db/migrations'), path.join(dist, 'core/db/migrations'), { recursive: true });
writeFileSync(path.join(dist, '.built'), `${new Date().toISOString()}\n`);
process.stdout.write('built dist/\n');
