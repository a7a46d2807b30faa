// What an audit entry's method and route did, in words ("Deleted host key"), and the dashboard
// page of the entity it named, when there is one.
import type { KindName } from '../api/types.ts';
import { isKindName, KIND_INFO } from '../catalog/kinds.ts';
import type { AuditEntry } from './audit-api.ts';

const FIXED: Record<string, string> = {
  'POST /api/auth/login': 'Signed in',
  'POST /api/auth/logout': 'Signed out',
  'PUT /api/auth/password': 'Changed their own password',
  'POST /api/users': 'Added a user',
  'PATCH /api/users/:username': 'Changed a user',
  'DELETE /api/users/:username': 'Deleted a user',
  'POST /api/relay-keys/by-id/:id/rotate': 'Rotated a relay key',
  'POST /api/catalog/apply': 'Applied a catalog file',
  'POST /api/reload': 'Reloaded the catalog',
  'POST /api/master-key/generate': 'Generated a master key',
  'PUT /api/settings/usage-logging': 'Changed the usage-logging setting',
  'PUT /api/settings/payload-logging': 'Changed the payload-logging setting',
  'CLI relay admin-user set': 'Set a user (from the CLI)',
};

const VERBS: Record<string, string> = { POST: 'Created', PUT: 'Changed', PATCH: 'Changed', DELETE: 'Deleted' };

/** The catalog kind a route writes (`/api/hosts`, `/api/hosts/by-id/:id`), or null. */
function kindOf(route: string): KindName | null {
  const m = /^\/api\/([a-z-]+)(?:\/by-id\/:id)?$/.exec(route);
  return m && isKindName(m[1]) ? (m[1] as KindName) : null;
}

/** A catalog file's change outside the API (method CATALOG, route `update models: bindings`). */
function catalogChangeOf(entry: AuditEntry): { action: string; kind: KindName } | null {
  const m = entry.method === 'CATALOG' ? /^(create|update|delete) ([a-z-]+)/.exec(entry.route) : null;
  return m && isKindName(m[2]) ? { action: m[1], kind: m[2] as KindName } : null;
}

const CATALOG_VERBS: Record<string, string> = { create: 'Created', update: 'Changed', delete: 'Deleted' };

function article(kind: KindName): string {
  return /^[aeiou]/.test(KIND_INFO[kind].singular) ? 'an' : 'a';
}

export function auditAction(entry: AuditEntry): string {
  const fixed = FIXED[`${entry.method} ${entry.route}`];
  if (fixed) return fixed;
  if (entry.method === 'CLI' && entry.route.startsWith('relay catalog apply')) return 'Applied a catalog file (from the CLI)';
  const change = catalogChangeOf(entry);
  if (change) return `${CATALOG_VERBS[change.action]} ${article(change.kind)} ${KIND_INFO[change.kind].singular} (catalog file)`;
  const kind = kindOf(entry.route);
  const verb = VERBS[entry.method];
  if (kind && verb) return `${verb} ${article(kind)} ${KIND_INFO[kind].singular}`;
  return `${entry.method} ${entry.route}`;
}

/** The dashboard page of the entity, while it may still exist (not after a delete). */
export function auditTargetHref(entry: AuditEntry): string | null {
  if (entry.target === null || entry.method === 'DELETE') return null;
  if (entry.route.startsWith('/api/relay-keys')) return `/catalog/relay-keys/${encodeURIComponent(entry.target)}`;
  const change = catalogChangeOf(entry);
  if (change?.action === 'delete') return null;
  const kind = change?.kind ?? kindOf(entry.route);
  if (kind === 'budgets') return `/budgets/${encodeURIComponent(entry.target)}`;
  return kind ? `/catalog/${kind}/${encodeURIComponent(entry.target)}` : null;
}
