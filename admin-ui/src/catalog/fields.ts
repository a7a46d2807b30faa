// The field descriptors a catalog form is drawn from. One descriptor per spec field; `key`
// is the dotted path inside spec (valueFrom.kind), which is also how server errors
// (JSON pointers like /spec/valueFrom/env) find their field.
import type { KindName } from '../api/types.ts';

interface FieldBase {
  key: string;
  label: string;
  help?: string;
  required?: boolean;
  /** Only show the field when this returns true for the current draft spec. */
  when?: (spec: Record<string, unknown>) => boolean;
}

export type Field =
  | FieldBase & {
    type: 'text'; placeholder?: string; monospace?: boolean; suggestions?: string[];
    /** The ids this instance has loaded (from /config.json): offered as suggestions, and a value outside them is flagged. */
    loaded?: 'adapters';
  }
  | FieldBase & { type: 'number'; integer?: boolean; min?: number; max?: number; step?: number; placeholder?: string }
  | FieldBase & { type: 'boolean'; onLabel?: string }
  | FieldBase & { type: 'select'; options: Array<{ value: string; label: string }> }
  | FieldBase & { type: 'ref'; kind: KindName; optional?: boolean; filter?: (spec: Record<string, unknown>) => boolean }
  | FieldBase & { type: 'refs'; kind: KindName; allowAll?: boolean; filter?: (spec: Record<string, unknown>) => boolean }
  | FieldBase & { type: 'list'; placeholder?: string }
  | FieldBase & { type: 'headers' }
  | FieldBase & { type: 'bindings' }
  | FieldBase & { type: 'secret'; placeholder?: string }
  | FieldBase & { type: 'datetime' }
  /** Comma-separated numbers (a budget's alertAt fractions). */
  | FieldBase & { type: 'numbers'; placeholder?: string }
  /** A budget's alert webhooks: URL and format per row. */
  | FieldBase & { type: 'webhooks' };

export function getPath(obj: Record<string, unknown>, key: string): unknown {
  let cur: unknown = obj;
  for (const part of key.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function setPath(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = key.split('.');
  const copy = { ...obj };
  if (rest.length === 0) {
    if (value === undefined) delete copy[head];
    else copy[head] = value;
    return copy;
  }
  const child = copy[head];
  copy[head] = setPath(child && typeof child === 'object' ? child as Record<string, unknown> : {}, rest.join('.'), value);
  return copy;
}

/** The JSON pointer of a spec field, as the API reports it in error.field. */
export function pointerOf(key: string): string {
  return `/spec/${key.split('.').join('/')}`;
}

/** Which field an error pointer belongs to: the longest field pointer that prefixes it. */
export function fieldForPointer(fields: Field[], pointer: string): string | undefined {
  if (pointer === '/metadata/displayName' || pointer === '/metadata/slug') return pointer;
  let best: string | undefined;
  for (const field of fields) {
    const p = pointerOf(field.key);
    if ((pointer === p || pointer.startsWith(`${p}/`)) && (!best || p.length > pointerOf(best).length)) best = field.key;
  }
  // An error about the object holding the field (e.g. /spec/valueFrom) goes to its first field.
  if (!best) best = fields.find((f) => pointerOf(f.key).startsWith(`${pointer}/`))?.key;
  return best;
}

/**
 * Where inside a field an error points, in words: `/spec/bindings/1/hostId` for the field
 * `bindings` is "item 2, hostId"; empty when the pointer is the field itself. A list field shows
 * one message for the whole list, so without this an operator could not tell which entry is wrong.
 */
export function placeInField(fieldKey: string, pointer: string): string {
  const base = pointerOf(fieldKey);
  if (!pointer.startsWith(`${base}/`)) return '';
  return pointer.slice(base.length + 1).split('/')
    .map((segment) => (/^\d+$/.test(segment) ? `item ${Number(segment) + 1}` : segment.replace(/~1/g, '/').replace(/~0/g, '~')))
    .join(', ');
}
