// The control plane's audit trail: who changed what, and when. A row for every change an
// authenticated caller asked for (any method but GET, HEAD and OPTIONS, refused ones included) and
// for every sign-in that succeeded: the caller, the route, the entity it named, the status it got,
// the request id and the address it came from. No body is kept: bodies carry host keys, relay
// keys and passwords. Unauthenticated calls are not recorded, so a keyless client cannot fill the
// table. The row is written after the answer went out; a failed write is logged and the change stands.
// A catalog file applied through the API adds a row per entity it changed. The rows and the
// CLI's own are kept by audit-store.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isKindName } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { CatalogChange } from '../catalog-file/apply.ts';
import { catalogChangeRows, clip, type AuditEntry, type AuditTrail } from './audit-store.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOGIN_ROUTE = '/api/auth/login';

interface Target {
  id: string;
  name: string | null;
}

/** Targets named before the change (a catalog entity by its slug) or by a handler (what a create made). */
const namedTargets = new WeakMap<FastifyRequest, Target>();

/** Names the entity a create made, for its audit row. */
export function noteAuditTarget(request: FastifyRequest, id: string, name: string | null = null): void {
  namedTargets.set(request, { id, name });
}

/** What a catalog file applied through the API changed, a row each after the request's own. */
const catalogChanges = new WeakMap<FastifyRequest, CatalogChange[]>();

export function noteAuditCatalogChanges(request: FastifyRequest, changes: CatalogChange[]): void {
  catalogChanges.set(request, changes);
}

/** The catalog kind of a by-id route (`/api/hosts/by-id/:id`, `/api/relay-keys/by-id/:id/rotate`). */
const BY_ID_ROUTE = /^\/api\/([a-z-]+)\/by-id\/:id(?:\/[a-z-]+)?$/;

function targetOf(request: FastifyRequest): Target | null {
  const named = namedTargets.get(request);
  if (named !== undefined) return { id: clip(named.id), name: named.name === null ? null : clip(named.name) };
  const params = request.params as Record<string, unknown> | undefined;
  const value = params?.id ?? params?.username;
  return typeof value === 'string' ? { id: clip(value), name: null } : null;
}

/** Before a change by id, the slug of the entity it names, while it still exists. */
function nameBeforeChange(request: FastifyRequest, snapshot: () => CatalogSnapshot): void {
  if (SAFE_METHODS.has(request.method) || request.controlPrincipal === null) return;
  const kind = BY_ID_ROUTE.exec(request.routeOptions.url ?? '')?.[1];
  const id = (request.params as { id?: unknown } | undefined)?.id;
  if (kind === undefined || !isKindName(kind) || typeof id !== 'string') return;
  const entity = snapshot().byKind(kind).get(id);
  if (entity) namedTargets.set(request, { id, name: entity.metadata.slug });
}

type Actor = Pick<AuditEntry['actor'], 'kind' | 'name'>;

function actorOf(request: FastifyRequest, reply: FastifyReply): Actor | null {
  const principal = request.controlPrincipal;
  if (principal?.kind === 'admin-token') return { kind: 'admin-token', name: null };
  if (principal?.kind === 'user') return { kind: 'user', name: principal.username };
  if (request.routeOptions.url === LOGIN_ROUTE && reply.statusCode === 200) {
    const username = (request.body as { username?: unknown } | undefined)?.username;
    if (typeof username === 'string') return { kind: 'user', name: clip(username) };
  }
  return null;
}

/** Records every change made on the control listener (see the top of this file). */
export function installAuditTrail(app: FastifyInstance, trail: AuditTrail, log: Logger, snapshot: () => CatalogSnapshot): void {
  app.addHook('preHandler', async (request) => nameBeforeChange(request, snapshot));
  app.addHook('onResponse', async (request, reply) => {
    if (SAFE_METHODS.has(request.method) || request.routeOptions.url === undefined) return;
    const actor = actorOf(request, reply);
    if (actor === null) return;
    const target = targetOf(request);
    const changes = reply.statusCode < 300 ? catalogChanges.get(request) ?? [] : [];
    await trail.recordAll([{
      actor,
      method: request.method,
      route: clip(request.routeOptions.url),
      target: target?.id ?? null,
      targetName: target?.name ?? null,
      status: reply.statusCode,
      requestId: clip(String(request.id)),
      clientIp: clip(request.ip ?? ''),
    }, ...catalogChangeRows(actor, changes, String(request.id), request.ip ?? '')]).catch((err: Error) => {
      log.warn({ err: { message: err.message }, route: request.routeOptions.url, status: reply.statusCode }, 'the audit trail could not record a control-plane change');
    });
  });
}
