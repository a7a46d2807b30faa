// GET /api/audit (admins only): the control plane's audit trail, newest first.
import { api } from '../api/client.ts';

export interface AuditEntry {
  id: string;
  at: string;
  actor: { kind: 'admin-token' | 'user' | 'cli' | 'catalog-file'; name: string | null };
  method: string;
  route: string;
  target: string | null;
  /** A catalog entity's slug when the change was made. */
  targetName: string | null;
  status: number;
  requestId: string;
  clientIp: string;
}

export interface AuditFilter {
  actor?: string;
  target?: string;
}

export function listAudit(filter: AuditFilter, before?: string): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
  const query = new URLSearchParams({ limit: '100' });
  if (filter.actor) query.set('actor', filter.actor);
  if (filter.target) query.set('target', filter.target);
  if (before) query.set('before', before);
  return api.get(`/api/audit?${query}`);
}
