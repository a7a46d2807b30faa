// The control plane's audit trail: who changed what, and when. A row for every change an
// authenticated caller asked for (any method but GET, HEAD and OPTIONS, refused ones included) and
// for every sign-in that succeeded: the caller, the route, the entity it named, the status it got,
// the request id and the address it came from. No body is kept: bodies carry host keys, relay
// keys and passwords. Unauthenticated calls are not recorded, so a keyless client cannot fill the
// table. The row is written after the answer went out; a failed write is logged and the change stands.
// The relay CLI, when it writes the database itself, records its changes here too (recordCliChange).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { isKindName } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Database } from '../db/types.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOGIN_ROUTE = '/api/auth/login';
/** Longest route, target or address kept: a route pattern and an id are far shorter. */
const MAX_TEXT = 300;

export interface AuditEntry {
  id: string;
  at: string;
  /** cli: the relay CLI writing the database itself, named by the operating-system user that ran it. */
  actor: { kind: 'admin-token' | 'user' | 'cli'; name: string | null };
  method: string;
  route: string;
  target: string | null;
  /** The catalog entity's slug when the change was made; null for what is not a catalog entity. */
  targetName: string | null;
  status: number;
  requestId: string;
  clientIp: string;
}

export interface AuditQuery {
  limit: number;
  /** Entries older than this entry id (the previous page's nextCursor). */
  before?: string;
  actor?: string;
  target?: string;
}

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

/** The catalog kind of a by-id route (`/api/hosts/by-id/:id`, `/api/relay-keys/by-id/:id/rotate`). */
const BY_ID_ROUTE = /^\/api\/([a-z-]+)\/by-id\/:id(?:\/[a-z-]+)?$/;

function clip(value: string): string {
  return value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value;
}

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

export class AuditTrail {
  constructor(private readonly db: Database) {}

  async record(row: Omit<AuditEntry, 'id' | 'at'>): Promise<void> {
    await this.db.query(
      `INSERT INTO control_audit (actor_kind, actor, method, route, target, target_name, status, request_id, client_ip)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [row.actor.kind, row.actor.name, row.method, row.route, row.target, row.targetName, row.status, row.requestId, row.clientIp],
    );
  }

  /** The newest entries first, `limit` of them, and the cursor of the page after. */
  async list(query: AuditQuery): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.before !== undefined) where.push(`id < $${params.push(query.before)}`);
    if (query.actor !== undefined) where.push(`actor = $${params.push(query.actor)}`);
    if (query.target !== undefined) where.push(`target = $${params.push(query.target)}`);
    const { rows } = await this.db.query<AuditRow>(
      `SELECT id::text AS id, at, actor_kind, actor, method, route, target, target_name, status, request_id, client_ip FROM control_audit
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY control_audit.id DESC LIMIT $${params.push(query.limit + 1)}`,
      params,
    );
    const items = rows.slice(0, query.limit).map(entryOf);
    return { items, nextCursor: rows.length > query.limit ? items[items.length - 1]!.id : null };
  }
}

interface AuditRow {
  id: string;
  at: Date | string;
  actor_kind: AuditEntry['actor']['kind'];
  actor: string | null;
  method: string;
  route: string;
  target: string | null;
  target_name: string | null;
  status: number;
  request_id: string;
  client_ip: string;
}

function entryOf(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    actor: { kind: row.actor_kind, name: row.actor },
    method: row.method,
    route: row.route,
    target: row.target,
    targetName: row.target_name,
    status: row.status,
    requestId: row.request_id,
    clientIp: row.client_ip,
  };
}

/** Records a change the relay CLI wrote to the database itself (`command`: `relay admin-user set`). */
export async function recordCliChange(db: Database, command: string, target: string | null): Promise<void> {
  await new AuditTrail(db).record({
    actor: { kind: 'cli', name: cliUser() }, method: 'CLI', route: clip(command), target: target === null ? null : clip(target), targetName: null,
    status: 200, requestId: randomUUID(), clientIp: clip(os.hostname()),
  }).catch((err: Error) => {
    // The change is made: say that it went unrecorded rather than fail the command.
    process.stderr.write(`${command}: the change was made, but the audit trail could not record it (${err.message})\n`);
  });
}

function cliUser(): string | null {
  try {
    return os.userInfo().username;
  } catch {
    return null; // a uid without a passwd entry (some containers)
  }
}

/** Records every change made on the control listener (see the top of this file). */
export function installAuditTrail(app: FastifyInstance, trail: AuditTrail, log: Logger, snapshot: () => CatalogSnapshot): void {
  app.addHook('preHandler', async (request) => nameBeforeChange(request, snapshot));
  app.addHook('onResponse', async (request, reply) => {
    if (SAFE_METHODS.has(request.method) || request.routeOptions.url === undefined) return;
    const actor = actorOf(request, reply);
    if (actor === null) return;
    const target = targetOf(request);
    await trail.record({
      actor,
      method: request.method,
      route: clip(request.routeOptions.url),
      target: target?.id ?? null,
      targetName: target?.name ?? null,
      status: reply.statusCode,
      requestId: clip(String(request.id)),
      clientIp: clip(request.ip ?? ''),
    }).catch((err: Error) => {
      log.warn({ err: { message: err.message }, route: request.routeOptions.url, status: reply.statusCode }, 'the audit trail could not record a control-plane change');
    });
  });
}
