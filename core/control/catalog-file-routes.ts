// The catalog as a file through the admin API (admin only: the export carries sealed host-key
// values): GET /api/catalog/export and POST /api/catalog/apply, which `relay catalog --url` calls.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogFileService } from '../catalog-file/service.ts';
import { CatalogDocumentSchema } from '../catalog-file/document.ts';
import { errorResponses } from './schemas.ts';
import { noteAuditCatalogChanges } from './audit-trail.ts';

const ApplyBody = Type.Object({
  document: Type.Record(Type.String(), Type.Unknown(), { description: 'The catalog file (relay catalog export), parsed.' }),
  dryRun: Type.Optional(Type.Boolean({ description: 'Check and report the changes; write nothing.' })),
  prune: Type.Optional(Type.Boolean({ description: 'Delete the providers, hosts, models, ... the file lacks (never relay keys).' })),
}, { additionalProperties: false });

const Change = Type.Object({
  action: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
  kind: Type.String(),
  slug: Type.String(),
  fields: Type.Optional(Type.Array(Type.String())),
});

const ApplyOutcomeSchema = Type.Object({
  changes: Type.Array(Change),
  unchanged: Type.Integer(),
  kept: Type.Integer({ description: 'Entities the file lacks, left in place (without prune).' }),
  dryRun: Type.Boolean(),
  prune: Type.Boolean(),
});

export function registerCatalogFileRoutes(app: FastifyInstance, deps: { catalogFile: CatalogFileService }): void {
  const tags = ['catalog'];
  const adminOnly = { adminOnly: true };
  app.get('/api/catalog/export', {
    config: adminOnly,
    schema: {
      summary: 'The catalog as a catalog file (references by slug; host keys by environment variable or sealed value)',
      operationId: 'export-catalog', tags, response: { 200: CatalogDocumentSchema, ...errorResponses },
    },
  }, async () => deps.catalogFile.export());

  app.post('/api/catalog/apply', {
    config: adminOnly,
    schema: {
      summary: 'Make the catalog match a catalog file, by slug, in one transaction; answers the changes',
      operationId: 'apply-catalog', tags, body: ApplyBody, response: { 200: ApplyOutcomeSchema, ...errorResponses },
    },
  }, async (request) => {
    const body = request.body as { document: unknown; dryRun?: boolean; prune?: boolean };
    const outcome = await deps.catalogFile.apply(body.document, { dryRun: body.dryRun, prune: body.prune });
    if (!outcome.dryRun) noteAuditCatalogChanges(request, outcome.changes);
    return outcome;
  });
}
