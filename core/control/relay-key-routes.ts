// Relay keys: the server mints the secret (core/crypto/relay-keys.ts), answers with the
// plaintext exactly once, and stores only its sha256 and a display prefix. Rotation replaces
// the hash; every instance drops the old one when the change notification reaches its
// snapshot. Enable/disable and expiresAt go through the uniform PUT.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogStore } from '../catalog/store.ts';
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

export function registerRelayKeyRoutes(app: FastifyInstance, deps: { store: CatalogStore }): void {
  const { store } = deps;

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
