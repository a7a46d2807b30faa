// GET /api/relay-keys/last-used and GET /api/host-keys/last-used: when each key was last used
// (core/pipeline/last-used.ts), the least recently used first, to find the keys nobody uses any more.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogSync } from '../catalog/sync.ts';
import type { LastUsed, LastUsedKind } from '../pipeline/last-used.ts';
import { errorResponses } from './schemas.ts';

const WORDING: Record<LastUsedKind, { idField: string; used: string; summary: string }> = {
  'relay-keys': {
    idField: 'relayKeyId',
    used: 'When a request with the key was last accepted',
    summary: 'When each relay key was last accepted, the least recently used first (never used keys before all others)',
  },
  'host-keys': {
    idField: 'hostKeyId',
    used: 'When Relay last sent a request upstream with the key',
    summary: 'When Relay last sent a request upstream with each host key, the least recently used first (never used keys before all others)',
  },
};

export function registerLastUsedRoute(app: FastifyInstance, deps: { sync: CatalogSync; lastUsed: LastUsed }): void {
  const { kind } = deps.lastUsed;
  const { idField, used, summary } = WORDING[kind];
  const list = Type.Object({
    items: Type.Array(Type.Object({
      [idField]: Type.String({ format: 'uuid' }),
      lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: `${used} (by any instance, to within about 15 s); null when never since it was made.` }),
    })),
  });
  app.get(`/api/${kind}/last-used`, {
    schema: { summary, operationId: `${kind}-last-used`, tags: [kind], response: { 200: list, ...errorResponses } },
  }, async () => {
    const seen = await deps.lastUsed.all();
    const entries = [...deps.sync.snapshot().byKind(kind).keys()].map((id) => ({ id, lastUsedAt: seen.get(id) ?? null }));
    entries.sort((a, b) => (a.lastUsedAt ?? '').localeCompare(b.lastUsedAt ?? '') || a.id.localeCompare(b.id));
    return { items: entries.map(({ id, lastUsedAt }) => ({ [idField]: id, lastUsedAt })) };
  });
}
