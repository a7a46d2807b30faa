// Relay keys: the server mints the secret (core/crypto/relay-keys.ts), answers with the
// plaintext exactly once, and stores only its sha256 and a display prefix. Rotation replaces
// the hash; every instance drops the old one when the change notification reaches its
// snapshot. Enable/disable and expiresAt go through the uniform PUT. GET /api/relay-keys/last-used
// says when each key was last accepted, to find the keys nobody uses any more.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogStore } from '../catalog/store.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import type { RelayKeyLastUsed } from '../pipeline/relay-key-last-used.ts';
import { mintRelayKey } from '../crypto/relay-keys.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { CreateBody } from './catalog-routes.ts';
import { toPublicEntity, withoutServerFields } from './public-entity.ts';
import { IdParams, createBodySchema, entitySchema, errorResponses } from './schemas.ts';
import { noteAuditTarget } from './audit-trail.ts';

const KeyWithPlaintext = Type.Object({
  plaintext: Type.String({ description: 'The relay key. Shown this once; only its sha256 is stored.' }),
  relayKey: entitySchema('relay-keys'),
});

const LastUsedList = Type.Object({
  items: Type.Array(Type.Object({
    relayKeyId: Type.String({ format: 'uuid' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a request with the key was last accepted (by any instance, to within about 15 s); null when never since it was made.' }),
  })),
});

export function registerRelayKeyRoutes(app: FastifyInstance, deps: { store: CatalogStore; sync: CatalogSync; lastUsed: RelayKeyLastUsed }): void {
  const { store } = deps;

  app.get('/api/relay-keys/last-used', {
    schema: {
      summary: 'When each relay key was last accepted, the least recently used first (never used keys before all others)',
      operationId: 'relay-keys-last-used', tags: ['relay-keys'], response: { 200: LastUsedList, ...errorResponses },
    },
  }, async () => {
    const seen = await deps.lastUsed.all();
    const items = [...deps.sync.snapshot().byKind('relay-keys').keys()].map((relayKeyId) => ({ relayKeyId, lastUsedAt: seen.get(relayKeyId) ?? null }));
    items.sort((a, b) => (a.lastUsedAt ?? '').localeCompare(b.lastUsedAt ?? '') || a.relayKeyId.localeCompare(b.relayKeyId));
    return { items };
  });

  app.post('/api/relay-keys', {
    schema: {
      summary: 'Create a relay key; the answer carries its plaintext, once', operationId: 'create-relay-keys', tags: ['relay-keys'],
      body: createBodySchema('relay-keys'), response: { 201: KeyWithPlaintext, ...errorResponses },
    },
  }, async (request, reply) => {
    const body = request.body as CreateBody;
    const minted = mintRelayKey();
    const spec = { ...withoutServerFields('relay-keys', body.spec), prefix: minted.prefix };
    const created = await store.create('relay-keys', body.metadata, spec, { secretHash: minted.hash });
    noteAuditTarget(request, created.metadata.id, created.metadata.slug);
    return reply.code(201).send({ plaintext: minted.plaintext, relayKey: toPublicEntity('relay-keys', created) });
  });

  app.post('/api/relay-keys/by-id/:id/rotate', {
    schema: {
      summary: 'Replace the secret of a relay key; the old one stops working at once', operationId: 'rotate-relay-keys', tags: ['relay-keys'],
      params: IdParams, response: { 200: KeyWithPlaintext, ...errorResponses },
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const current = await store.getById('relay-keys', id);
    if (!current) throw new RelayError('RELAY_ERR_NOT_FOUND', `no relay key with id ${echoedName(id)}`);
    const minted = mintRelayKey();
    const updated = await store.update('relay-keys', id, { spec: { prefix: minted.prefix } }, { secretHash: minted.hash });
    return { plaintext: minted.plaintext, relayKey: toPublicEntity('relay-keys', updated) };
  });
}
