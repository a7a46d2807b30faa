// The catalog file as text: YAML out (with a header saying how to use it) and YAML or JSON in,
// and an apply's outcome as the diff an operator reads.
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { StartupError } from '../errors.ts';
import type { ApplyOutcome } from './apply.ts';
import { FILE_KINDS, type CatalogDocument } from './document.ts';

const HEADER = `# Relay catalog. Apply with: relay catalog apply -f FILE [--dry-run] [--prune]
# Entities are matched by slug; references name the slug of their target. Host keys name an
# environment variable or carry a value sealed under RELAY_MASTER_KEY, never plaintext.
`;

/** Keys in one order (slug, displayName, spec, sealedValue), whichever path the document came by. */
export function catalogYaml(doc: CatalogDocument): string {
  const ordered: Record<string, unknown> = { version: doc.version };
  for (const kind of FILE_KINDS) {
    const items = doc[kind];
    if (!items) continue;
    ordered[kind] = items.map(({ slug, displayName, spec, sealedValue }) => ({
      slug, ...(displayName === undefined ? {} : { displayName }), spec, ...(sealedValue === undefined ? {} : { sealedValue }),
    }));
  }
  return HEADER + stringifyYaml(ordered, { lineWidth: 0 });
}

/** Parses a catalog file's text; `where` names it in errors. */
export function parseCatalogText(text: string, where: string): unknown {
  try {
    return where.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new StartupError(`${where}: not valid ${where.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
  }
}

const SIGN = { create: '+', update: '~', delete: '-' } as const;

export function formatOutcome(outcome: ApplyOutcome): string {
  const lines = outcome.changes.map((c) => `${SIGN[c.action]} ${c.action} ${c.kind}/${c.slug}${c.fields ? ` (${c.fields.join(', ')})` : ''}`);
  const count = (action: string) => outcome.changes.filter((c) => c.action === action).length;
  const n = outcome.changes.length;
  let summary = `${n} change${n === 1 ? '' : 's'}`;
  if (n > 0) summary += ` (${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete)`;
  summary += `, ${outcome.unchanged} unchanged`;
  if (outcome.kept > 0) summary += `, ${outcome.kept} not in the file kept (--prune deletes them)`;
  if (outcome.dryRun) summary += '; dry run: nothing was written';
  return `${[...lines, summary].join('\n')}\n`;
}
