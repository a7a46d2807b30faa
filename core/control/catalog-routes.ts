// Uniform CRUD for the eight catalog kinds under /api/{plural}. Kinds with secrets plug in a
// SpecWriter (host keys seal their value, budgets their webhook URLs, hosts their header values);
// relay keys create through their own route because the answer carries the plaintext once.
import type { FastifyInstance } from 'fastify';
import { KINDS, KIND_NAMES, type KindName } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';
import type { CatalogStore, EntitySecrets } from '../catalog/store.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { secretViews, toPublicEntity, withoutServerFields } from './public-entity.ts';
import {
  IdParams, ListQuery, RefParams, createBodySchema, entitySchema, errorResponses, listSchema, updateBodySchema,
} from './schemas.ts';
import { noteAuditTarget } from './audit-trail.ts';

export interface SpecToStore {
  spec: Record<string, unknown>;
  secrets?: EntitySecrets;
}

/** Per-kind handling of write-only input (secrets) before the store sees a spec. */
export interface SpecWriter {
  forCreate(spec: Record<string, unknown>): SpecToStore;
  /** `patch` is the caller's partial spec; `current` the stored entity. */
  forUpdate(current: AnyEntity, patch: Record<string, unknown>): SpecToStore;
}

export interface CreateBody {
  metadata: { displayName: string; slug?: string };
  spec: Record<string, unknown>;
}

export interface UpdateBody {
  metadata?: { displayName?: string };
  spec?: Record<string, unknown>;
}

export interface CatalogRoutesOptions {
  store: CatalogStore;
  writers?: Partial<Record<KindName, SpecWriter>>;
  /** Kinds whose POST /api/{plural} another module registers. */
  customCreate?: KindName[];
  /** Opens budgets' sealed webhook URLs and hosts' sealed header values for the answers. */
  sealer: Sealer;
}

export function registerCatalogRoutes(app: FastifyInstance, options: CatalogRoutesOptions): void {
  const { store } = options;
  for (const kind of KIND_NAMES) {
    const def = KINDS[kind];
    const writer = options.writers?.[kind];
    const base = `/api/${kind}`;
    const tags = [kind];

    app.get(base, {
      schema: {
        summary: `List ${kind}`, operationId: `list-${kind}`, tags, querystring: ListQuery,
        response: { 200: listSchema(kind), ...errorResponses },
      },
    }, async (request) => {
      const query = request.query as { limit?: number; cursor?: string; q?: string };
      const page = await store.list(kind, { limit: query.limit, cursor: query.cursor || undefined, q: query.q || undefined });
      const views = secretViews(options.sealer, request);
      return { items: page.items.map((e) => toPublicEntity(kind, e, views)), nextCursor: page.nextCursor };
    });

    app.get(`${base}/:ref`, {
      schema: {
        summary: `Read a ${def.singular} by slug or id`, operationId: `get-${kind}`, tags, params: RefParams,
        response: { 200: entitySchema(kind), ...errorResponses },
      },
    }, async (request) => {
      const { ref } = request.params as { ref: string };
      const entity = await store.get(kind, ref);
      if (!entity) throw new RelayError('RELAY_ERR_NOT_FOUND', `no ${def.singular} with slug or id ${JSON.stringify(echoedName(ref))}`);
      return toPublicEntity(kind, entity, secretViews(options.sealer, request));
    });

    app.get(`${base}/by-id/:id`, {
      schema: {
        summary: `Read a ${def.singular} by id (the URL its PUT and DELETE take)`, operationId: `get-${kind}-by-id`, tags, params: IdParams,
        response: { 200: entitySchema(kind), ...errorResponses },
      },
    }, async (request) => {
      const { id } = request.params as { id: string };
      const entity = await store.getById(kind, id);
      if (!entity) throw new RelayError('RELAY_ERR_NOT_FOUND', `no ${def.singular} with id ${echoedName(id)}`);
      return toPublicEntity(kind, entity, secretViews(options.sealer, request));
    });

    if (!options.customCreate?.includes(kind)) {
      app.post(base, {
        schema: {
          summary: `Create a ${def.singular}`, operationId: `create-${kind}`, tags, body: createBodySchema(kind),
          response: { 201: entitySchema(kind), ...errorResponses },
        },
      }, async (request, reply) => {
        const body = request.body as CreateBody;
        const input = withoutServerFields(kind, body.spec);
        const { spec, secrets } = writer ? writer.forCreate(input) : { spec: input, secrets: undefined };
        const created = await store.create(kind, body.metadata, spec, secrets);
        noteAuditTarget(request, created.metadata.id, created.metadata.slug);
        return reply.code(201).send(toPublicEntity(kind, created, secretViews(options.sealer, request)));
      });
    }

    app.put(`${base}/by-id/:id`, {
      schema: {
        summary: `Update a ${def.singular}; a partial spec is merged into the stored one`, operationId: `update-${kind}`, tags,
        params: IdParams, body: updateBodySchema(kind), response: { 200: entitySchema(kind), ...errorResponses },
      },
    }, async (request) => {
      const { id } = request.params as { id: string };
      const body = request.body as UpdateBody;
      const current = await store.getById(kind, id);
      if (!current) throw new RelayError('RELAY_ERR_NOT_FOUND', `no ${def.singular} with id ${echoedName(id)}`);
      const patch = withoutServerFields(kind, body.spec ?? {});
      const { spec, secrets } = writer ? writer.forUpdate(current, patch) : { spec: patch, secrets: undefined };
      const updated = await store.update(kind, id, { displayName: body.metadata?.displayName, spec }, secrets);
      return toPublicEntity(kind, updated, secretViews(options.sealer, request));
    });

    app.delete(`${base}/by-id/:id`, {
      schema: {
        summary: `Delete a ${def.singular}; 409 names the entities that still reference it`, operationId: `delete-${kind}`, tags,
        params: IdParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...errorResponses },
      },
    }, async (request, reply) => {
      const { id } = request.params as { id: string };
      await store.delete(kind, id);
      return reply.code(204).send();
    });
  }
}
