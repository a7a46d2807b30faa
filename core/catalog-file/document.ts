// The catalog file's form: one list per kind, each entity named by its slug, and every reference
// between entities written as the slug of its target instead of its id, so the file reads (and
// diffs) the same on every instance. Host keys carry their secret by reference only: an
// environment variable's name, or a value sealed under RELAY_MASTER_KEY (relay master-key seal).
import { Type, type Static } from '@sinclair/typebox';
import { KINDS, type KindName } from '../catalog/kinds.ts';

/** The kinds a catalog file manages, in the order they are written (each refers only to earlier ones, or to relay keys, which it does not manage). */
export const FILE_KINDS = ['providers', 'hosts', 'rate-limits', 'models', 'policies', 'host-keys', 'pricings', 'budgets'] as const satisfies readonly KindName[];
export type FileKind = (typeof FILE_KINDS)[number];

export const CATALOG_FILE_VERSION = 1;

export const FileEntity = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 63 }),
  displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Defaults to the slug.' })),
  spec: Type.Record(Type.String(), Type.Unknown(), { description: "The kind's spec as the admin API takes it, with slugs where the API takes ids." }),
  sealedValue: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536, description: 'Host keys with valueFrom.kind stored: the value sealed under RELAY_MASTER_KEY (relay master-key seal).' })),
}, { additionalProperties: false });

const list = () => Type.Optional(Type.Array(FileEntity, { maxItems: 100_000 }));

export const CatalogDocumentSchema = Type.Object({
  version: Type.Literal(CATALOG_FILE_VERSION, { description: 'The file format: 1.' }),
  providers: list(), hosts: list(), 'rate-limits': list(), models: list(), policies: list(), 'host-keys': list(), pricings: list(), budgets: list(),
}, { additionalProperties: false });

export type FileEntity = Static<typeof FileEntity>;
export type CatalogDocument = { version: typeof CATALOG_FILE_VERSION } & Partial<Record<FileKind, FileEntity[]>>;

/** One reference of a spec: where it sits (a JSON pointer), the kind it names, and its value. */
export interface SpecReference {
  pointer: string;
  kind: KindName;
  value: string;
}

/**
 * A copy of `spec` with each reference (ids in the store, slugs in the file) replaced by
 * `map(ref)`. '*' (every model) is not a reference and stays.
 */
export function mapReferences(kind: KindName, spec: Record<string, unknown>, map: (ref: SpecReference) => string): Record<string, unknown> {
  const copy = structuredClone(spec);
  for (const ref of KINDS[kind].references) rewrite(copy, ref.path.split('.'), '/spec', ref.kind, map);
  return copy;
}

function rewrite(holder: unknown, segments: string[], pointer: string, kind: KindName, map: (ref: SpecReference) => string): void {
  if (holder === null || typeof holder !== 'object' || Array.isArray(holder)) return;
  const [head, ...rest] = segments;
  const isArray = head.endsWith('[]');
  const key = isArray ? head.slice(0, -2) : head;
  const record = holder as Record<string, unknown>;
  const value = record[key];
  const here = `${pointer}/${key}`;
  const visit = (item: unknown, itemPointer: string, set: (v: string) => void): void => {
    if (rest.length === 0) {
      if (typeof item === 'string' && item !== '*') set(map({ pointer: itemPointer, kind, value: item }));
    } else {
      rewrite(item, rest, itemPointer, kind, map);
    }
  };
  if (isArray) {
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${here}/${i}`, (v) => { value[i] = v; }));
  } else if (value !== undefined) {
    visit(value, here, (v) => { record[key] = v; });
  }
}
