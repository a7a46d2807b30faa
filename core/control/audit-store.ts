// The audit trail's rows (audit-trail.ts records the control plane's changes): written after each
// change, read newest first by id with a cursor. The relay CLI, when it writes the database itself,
// records its changes here too (recordCliChange), and so does a catalog file applied outside the
// API (recordCatalogChanges: catalog.file at start, relay catalog apply), a row per entity.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Database } from '../db/types.ts';
import type { CatalogChange } from '../catalog-file/apply.ts';

/** Longest route, target or address kept: a route pattern and an id are far shorter. */
const MAX_TEXT = 300;

export function clip(value: string): string {
  return value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value;
}

export interface AuditEntry {
  id: string;
  at: string;
  /**
   * cli: the relay CLI writing the database itself, named by the operating-system user that ran
   * it; catalog-file: catalog.file applied as an instance started, named by the file's path.
   */
  actor: { kind: 'admin-token' | 'user' | 'cli' | 'catalog-file'; name: string | null };
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

export class AuditTrail {
  constructor(private readonly db: Database) {}

  async record(row: Omit<AuditEntry, 'id' | 'at'>): Promise<void> {
    await this.recordAll([row]);
  }

  /** Rows in one statement, in their order. */
  async recordAll(rows: Array<Omit<AuditEntry, 'id' | 'at'>>): Promise<void> {
    if (rows.length === 0) return;
    const column = <T>(of: (row: Omit<AuditEntry, 'id' | 'at'>) => T): T[] => rows.map(of);
    await this.db.query(
      `INSERT INTO control_audit (actor_kind, actor, method, route, target, target_name, status, request_id, client_ip)
       SELECT actor_kind, actor, method, route, target, target_name, status, request_id, client_ip FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[]) WITH ORDINALITY
         AS r(actor_kind, actor, method, route, target, target_name, status, request_id, client_ip, n) ORDER BY n`,
      [column((r) => r.actor.kind), column((r) => r.actor.name), column((r) => r.method), column((r) => r.route), column((r) => r.target),
        column((r) => r.targetName), column((r) => r.status), column((r) => r.requestId), column((r) => r.clientIp)],
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
    actor: cliActor(), method: 'CLI', route: clip(command), target: target === null ? null : clip(target), targetName: null,
    status: 200, requestId: randomUUID(), clientIp: clip(os.hostname()),
  }).catch((err: Error) => {
    // The change is made: say that it went unrecorded rather than fail the command.
    process.stderr.write(`${command}: the change was made, but the audit trail could not record it (${err.message})\n`);
  });
}

/**
 * Records what a catalog file applied outside the API changed, a row per entity (method CATALOG,
 * route `update models: bindings`), under one request id. Rejects when the rows cannot be
 * written; the changes are made by then.
 */
export async function recordCatalogChanges(db: Database, actor: AuditEntry['actor'], changes: CatalogChange[]): Promise<void> {
  await new AuditTrail(db).recordAll(catalogChangeRows(actor, changes, randomUUID(), os.hostname()));
}

/** A row per entity a catalog file changed (method CATALOG), by `actor`, under one request id. */
export function catalogChangeRows(actor: AuditEntry['actor'], changes: CatalogChange[], requestId: string, clientIp: string): Array<Omit<AuditEntry, 'id' | 'at'>> {
  return changes.map((change) => ({
    actor: { kind: actor.kind, name: actor.name === null ? null : clip(actor.name) },
    method: 'CATALOG', route: clip(`${change.action} ${change.kind}${change.fields?.length ? `: ${change.fields.join(', ')}` : ''}`),
    target: change.id, targetName: change.slug, status: 200, requestId: clip(requestId), clientIp: clip(clientIp),
  }));
}

/** The relay CLI as an actor: the operating-system user that ran it. */
export function cliActor(): AuditEntry['actor'] {
  return { kind: 'cli', name: cliUser() };
}

function cliUser(): string | null {
  try {
    return os.userInfo().username;
  } catch {
    return null; // a uid without a passwd entry (some containers)
  }
}

