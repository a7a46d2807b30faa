#!/usr/bin/env node
// The `relay` command. Relay runs its TypeScript sources through tsx's loader
// (esbuild: compiles each module once at start-up; no cost per request).
import { register } from 'tsx/esm/api';
register();
await import('./relay-cli.ts');
