// Turns a form's draft spec into what the API accepts: no server-set fields, no empty
// optional references, the host-key value only when typed, and only the fields of the mode chosen.
import type { KindName } from '../api/types.ts';
import { KIND_INFO } from './kinds.ts';
import { getPath, type Field } from './fields.ts';
import { pruneOptions } from './host-options.ts';

const SERVER_FIELDS = ['hasValue', 'prefix'];

/**
 * `stored`: the entity's spec as loaded, for an edit. An update is merged into the stored spec, so
 * a field the operator emptied is sent as null (which clears it), not left out (which keeps it).
 */
export function specPayload(kind: KindName, draft: Record<string, unknown>, stored?: Record<string, unknown>): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...draft };
  for (const key of SERVER_FIELDS) delete spec[key];
  // Vendor options: cleared fields and emptied groups left out (an empty Entra group is no Entra).
  if ('options' in spec) spec.options = pruneOptions(spec.options);
  for (const [key, value] of Object.entries(spec)) {
    if (value === '' || value === undefined) delete spec[key];
  }
  for (const key of Object.keys(stored ?? {})) {
    if (!SERVER_FIELDS.includes(key) && key !== 'value' && !(key in spec)) spec[key] = null;
  }
  if (kind === 'host-keys') {
    const valueFrom = { ...(spec.valueFrom as Record<string, unknown> | undefined) };
    if (valueFrom.kind === 'stored') delete valueFrom.env;
    else delete spec.value;
    spec.valueFrom = valueFrom;
  }
  if (kind === 'relay-keys' && spec.expiresAt === undefined) spec.expiresAt = null;
  // A budget's scope is sent whole (an update replaces it): only the reference chosen, or {} for everything.
  if (kind === 'budgets') {
    spec.scope = Object.fromEntries(Object.entries((draft.scope ?? {}) as Record<string, unknown>).filter(([, v]) => typeof v === 'string' && v !== ''));
    if (spec.alertWebhooks === null) spec.alertWebhooks = [];
  }
  return spec;
}

/** Client-side checks before sending: required fields that are visible and empty. */
export function missingRequired(kind: KindName, draft: Record<string, unknown>, isNew: boolean, hasStoredValue: boolean): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const field of KIND_INFO[kind].fields as Field[]) {
    if (field.when && !field.when(draft)) continue;
    const value = getPath(draft, field.key);
    if (field.required && (value === undefined || value === '' || value === null)) errors[field.key] = `${field.label} is required.`;
    if (field.type === 'secret' && (isNew || !hasStoredValue) && !value) errors[field.key] = 'Enter the secret value to store.';
  }
  return errors;
}
