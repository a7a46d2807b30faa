// GET /api/audit: the control plane's audit trail (audit-trail.ts), newest first. Admin only:
// it names every user and the addresses they came from.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AuditQuery, AuditTrail } from './audit-store.ts';
import { errorResponses } from './schemas.ts';

const AuditEntrySchema = Type.Object({
  id: Type.String({ description: 'Increasing with time; the cursor of the entries before it.' }),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Object({
    kind: Type.Union([Type.Literal('admin-token'), Type.Literal('user'), Type.Literal('cli'), Type.Literal('catalog-file')], {
      description: 'admin-token: RELAY_ADMIN_TOKEN; user: a signed-in dashboard user; cli: the relay CLI writing the database itself; catalog-file: catalog.file applied as an instance started.',
    }),
    name: Type.Union([Type.String(), Type.Null()], { description: "The user's name (for cli, the operating-system user that ran it; for catalog-file, the file's path); null for the admin token." }),
  }),
  method: Type.String({ description: 'The HTTP method; CLI for a command of the relay CLI; CATALOG for an entity a catalog file changed (after its apply\'s own row when applied through the API).' }),
  route: Type.String({ description: 'The route as declared, e.g. /api/relay-keys/by-id/:id; for CATALOG, the change and its kind, e.g. `update models: bindings`.' }),
  target: Type.Union([Type.String(), Type.Null()], { description: 'The entity the change named: the id in the path, or the id a create made.' }),
  targetName: Type.Union([Type.String(), Type.Null()], { description: "A catalog entity's slug when the change was made (it outlives a delete); null otherwise." }),
  status: Type.Integer({ description: 'What the change was answered: a 4xx is a refused change.' }),
  requestId: Type.String(),
  clientIp: Type.String({ description: "The caller's address; for cli and catalog-file, the machine's host name." }),
});

const AuditQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,17}$', description: "The last page's nextCursor." })),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: "Only this user's changes." })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Only changes that named this entity id (or username).' })),
}, { additionalProperties: false });

export function registerAuditRoutes(app: FastifyInstance, deps: { trail: AuditTrail }): void {
  app.get('/api/audit', {
    config: { adminOnly: true },
    schema: {
      summary: 'The audit trail: every change made through the control API and every sign-in, newest first',
      operationId: 'list-audit', tags: ['audit'], querystring: AuditQuerySchema,
      response: { 200: Type.Object({ items: Type.Array(AuditEntrySchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses },
    },
  }, async (request) => {
    const query = request.query as Partial<AuditQuery>;
    return deps.trail.list({ ...query, limit: query.limit ?? 100 });
  });
}
