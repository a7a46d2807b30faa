// A vendor adapter's host options (the JSON Schema GET /api/vendor-adapters returns) as form
// fields under spec.options: strings, numbers, booleans, choices and lists of strings, nested
// objects flattened to dotted keys (options.entra.tenantId). The server checks them again on save.
import type { Field } from './fields.ts';

export interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
}

export interface VendorAdapterInfo {
  id: string;
  shapes: string[];
  hostOptions: JsonSchema | null;
}

function choices(schema: JsonSchema): string[] | null {
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s) => s.const !== undefined)) return schema.anyOf.map((s) => String(s.const));
  return null;
}

function label(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
}

/**
 * The fields of an adapter's host options. A nested object's required fields are required only
 * when its parent is (an optional group such as Entra ID is left empty to leave it out).
 */
export function hostOptionFields(schema: JsonSchema | null | undefined, prefix = 'options', parentRequired = true, group = ''): Field[] {
  if (!schema?.properties) return [];
  const out: Field[] = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    const key = `${prefix}.${name}`;
    const required = parentRequired && (schema.required ?? []).includes(name);
    const title = group ? `${group}: ${label(name)}` : label(name);
    const help = [prop.description, prop.default !== undefined ? `Default: ${String(prop.default)}.` : ''].filter(Boolean).join(' ') || undefined;
    const options = choices(prop);
    if (prop.type === 'object') {
      out.push(...hostOptionFields(prop, key, required, title));
    } else if (options) {
      const blank = required ? [] : [{ value: '', label: prop.default !== undefined ? `(default: ${String(prop.default)})` : '(not set)' }];
      out.push({ key, label: title, type: 'select', required, help, options: [...blank, ...options.map((v) => ({ value: v, label: v }))] });
    } else if (prop.type === 'integer' || prop.type === 'number') {
      out.push({ key, label: title, type: 'number', integer: prop.type === 'integer', min: prop.minimum, max: prop.maximum, required, help });
    } else if (prop.type === 'array' && prop.items?.type === 'string') {
      out.push({ key, label: title, type: 'list', required, help: [help, prop.items.description].filter(Boolean).join(' ') || undefined });
    } else if (prop.type === 'boolean') {
      out.push({ key, label: title, type: 'boolean', required, help });
    } else {
      out.push({ key, label: title, type: 'text', monospace: true, required, help, placeholder: prop.default !== undefined ? String(prop.default) : undefined });
    }
  }
  return out;
}

/** spec.options without empty values and empty groups (a cleared Entra group is left out); undefined when nothing is left. */
export function pruneOptions(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const pruned = pruneOptions(v);
    if (pruned !== undefined) out[k] = pruned;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
