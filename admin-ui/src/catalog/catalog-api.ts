// Catalog calls: the uniform CRUD of the eight kinds, plus relay-key rotation and host-key health.
import { api } from '../api/client.ts';
import type { Entity, HostKeyHealth, KindName, Page, PlaintextResult } from '../api/types.ts';

export function listPage(kind: KindName, query: { limit?: number; cursor?: string | null; q?: string }): Promise<Page<Entity>> {
  return api.get<Page<Entity>>(`/api/${kind}`, { limit: query.limit ?? 50, cursor: query.cursor, q: query.q });
}

/** Every entity of a kind (for selects and id -> name lookups); follows cursors up to a bound. */
export async function listAll(kind: KindName, bound = 2000): Promise<Entity[]> {
  const out: Entity[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<Entity> = await listPage(kind, { limit: 200, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && out.length < bound);
  return out;
}

export const getEntity = (kind: KindName, ref: string) => api.get<Entity>(`/api/${kind}/${encodeURIComponent(ref)}`);

export function createEntity(kind: KindName, body: { metadata: { displayName: string; slug?: string }; spec: Record<string, unknown> }) {
  return api.post<Entity | PlaintextResult>(`/api/${kind}`, body);
}

export function updateEntity(kind: KindName, id: string, body: { metadata?: { displayName: string }; spec: Record<string, unknown> }) {
  return api.put<Entity>(`/api/${kind}/by-id/${encodeURIComponent(id)}`, body);
}

export const deleteEntity = (kind: KindName, id: string) => api.del(`/api/${kind}/by-id/${encodeURIComponent(id)}`);

export const rotateRelayKey = (id: string) => api.post<PlaintextResult>(`/api/relay-keys/by-id/${encodeURIComponent(id)}/rotate`);

/** When each relay key was last accepted, or each host key last sent upstream: an ISO time, or null when never. */
export async function keysLastUsed(kind: 'relay-keys' | 'host-keys'): Promise<Map<string, string | null>> {
  const { items } = await api.get<{ items: Array<{ relayKeyId?: string; hostKeyId?: string; lastUsedAt: string | null }> }>(`/api/${kind}/last-used`);
  return new Map(items.map((i) => [(i.relayKeyId ?? i.hostKeyId)!, i.lastUsedAt]));
}

export async function hostKeyHealth(): Promise<Map<string, HostKeyHealth>> {
  const { items } = await api.get<{ items: HostKeyHealth[] }>('/api/host-keys/health');
  return new Map(items.map((h) => [h.hostKeyId, h]));
}
