// Writes config/relay.schema.json from the TypeBox schema of the config file (npm run config:schema).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RelayConfigSchema } from './schema.ts';

/** Fields with a default are optional in the file: drop them from `required` for editors. */
function optionalDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(optionalDefaults);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = optionalDefaults(v);
  const props = out.properties as Record<string, { default?: unknown }> | undefined;
  if (Array.isArray(out.required) && props) {
    out.required = (out.required as string[]).filter((name) => props[name]?.default === undefined);
    if ((out.required as string[]).length === 0) delete out.required;
  }
  return out;
}

export function configJsonSchema(): string {
  const schema = optionalDefaults(JSON.parse(JSON.stringify(RelayConfigSchema))) as object;
  return `${JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'Relay config', ...schema }, null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config/relay.schema.json');
  writeFileSync(out, configJsonSchema());
  process.stdout.write(`wrote ${out}\n`);
}
