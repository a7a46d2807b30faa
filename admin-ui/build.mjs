// Builds the admin dashboard into admin-ui/dist: one esbuild pass (no type check, ~0.3 s),
// content-hashed assets under dist/assets, and an index.html that names them.
// Run with `npm run build:ui`; `--watch` rebuilds on change; `--outdir DIR` builds into DIR instead
// (the dashboard tests each build their own, so that two running at once never serve half a build).
// `npm run typecheck:ui` type-checks.
import { build, context } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const outdirAt = process.argv.indexOf('--outdir');
const dist = outdirAt >= 0 && process.argv[outdirAt + 1] ? path.resolve(process.argv[outdirAt + 1]) : path.join(here, 'dist');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions} */
const options = {
  absWorkingDir: here,
  entryPoints: ['src/main.tsx'],
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: !watch,
  sourcemap: 'linked',
  outdir: path.join(dist, 'assets'),
  entryNames: 'app-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
  plugins: [{ name: 'write-index-html', setup(b) { b.onEnd(writeIndexHtml); } }],
};

async function writeIndexHtml(result) {
  if (result.errors.length > 0 || !result.metafile) return;
  const outputs = Object.keys(result.metafile.outputs).map((p) => path.relative(dist, path.resolve(here, p)).split(path.sep).join('/'));
  const js = outputs.find((p) => p.endsWith('.js'));
  const css = outputs.find((p) => p.endsWith('.css'));
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Relay</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='7' fill='%234f46e5'/%3E%3Cpath d='M9 22V10h7a4 4 0 0 1 0 8h-7m7 0 5 4' stroke='white' stroke-width='2.6' fill='none' stroke-linecap='round' stroke-linejoin='round'/%3E%3C/svg%3E">
${css ? `<link rel="stylesheet" href="/${css}">` : ''}
<script type="module" src="/${js}"></script>
</head>
<body>
<div id="app"><noscript>The Relay dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
  await writeFile(path.join(dist, 'index.html'), html);
}

await rm(dist, { recursive: true, force: true });
await mkdir(path.join(dist, 'assets'), { recursive: true });
const started = Date.now();
if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  console.log('admin-ui: watching admin-ui/src');
} else {
  await build(options);
  console.log(`admin-ui: built ${path.relative(process.cwd(), dist) || '.'} in ${Date.now() - started} ms`);
}
