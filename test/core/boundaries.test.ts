// The dependency picture is one-way: plugins -> plugin API -> kernel internals. core/ never
// imports a plugin; a plugin imports core only through core/plugin-api.ts (and its modules in
// core/plugin-api/) and never reaches
// into another plugin's folder. (The same surface an out-of-tree plugin compiles against.)
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...tsFiles(p));
    } else if (/\.(ts|tsx)$/.test(entry.name)) out.push(p);
  }
  return out;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g)) {
    specs.push(m[1] ?? m[2] ?? m[3]);
  }
  return specs;
}

t.test('core never imports from plugins/', async (t) => {
  const offenders: string[] = [];
  for (const file of tsFiles(path.join(root, 'core'))) {
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec);
      if (target.startsWith(path.join(root, 'plugins') + path.sep)) offenders.push(`${path.relative(root, file)} -> ${spec}`);
    }
  }
  t.same(offenders, []);
});

t.test('plugins import core only through the plugin API, and no other plugin', async (t) => {
  const offenders: string[] = [];
  const pluginsDir = path.join(root, 'plugins');
  for (const file of tsFiles(pluginsDir)) {
    const own = path.relative(pluginsDir, file).split(path.sep)[0];
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec);
      const rel = path.relative(root, target);
      const api = rel === path.join('core', 'plugin-api.ts') || (rel.startsWith(path.join('core', 'plugin-api') + path.sep) && rel.endsWith('.ts'));
      if (rel.startsWith(`core${path.sep}`) && !api) offenders.push(`${path.relative(root, file)} -> ${spec}`);
      if (rel.startsWith(`plugins${path.sep}`) && rel.split(path.sep)[1] !== own) offenders.push(`${path.relative(root, file)} -> ${spec}`);
    }
  }
  t.same(offenders, []);
});

t.test('examples use the published package name, not relative paths into core or plugins', async (t) => {
  const offenders: string[] = [];
  for (const file of tsFiles(path.join(root, 'examples'))) {
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const rel = path.relative(root, path.resolve(path.dirname(file), spec));
      if (rel.startsWith(`core${path.sep}`) || rel.startsWith(`plugins${path.sep}`)) offenders.push(`${path.relative(root, file)} -> ${spec}`);
    }
  }
  t.same(offenders, []);
});
