// The plugin API's main entry exports what plugins/README.md documents and nothing else, and stays
// small enough to learn in an afternoon (fewer than 50 names). Read with TypeScript's own checker,
// so type-only exports count as values do.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(root, 'core/plugin-api.ts');

function exportedNames(file: string): string[] {
  const program = ts.createProgram([file], { allowImportingTsExtensions: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022 });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const symbol = source && checker.getSymbolAtLocation(source);
  if (!symbol) throw new Error(`TypeScript did not read ${file}`);
  return checker.getExportsOfModule(symbol).map((s) => s.getName()).sort();
}

/** The names plugins/README.md lists for the `relay-gateway` module, in its table's row. */
function documentedNames(readme: string): Set<string> {
  const row = readme.split('\n').find((line) => line.startsWith('| `relay-gateway` |'));
  if (!row) throw new Error('plugins/README.md has no row for the relay-gateway module');
  return new Set([...row.matchAll(/`([A-Za-z_]\w*)`/g)].map((m) => m[1]));
}

t.test('every name of the main entry is documented, and there are fewer than 50', async (t) => {
  const names = exportedNames(entry);
  const documented = documentedNames(readFileSync(path.join(root, 'plugins/README.md'), 'utf8'));
  t.ok(names.length > 20, `read ${names.length} names`);
  t.same(names.filter((n) => !documented.has(n)), [], 'exported but not in plugins/README.md');
  t.ok(names.length < 50, `${names.length} names exported`);
});
