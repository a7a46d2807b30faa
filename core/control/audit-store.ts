// The audit trail's rows (audit-trail.ts records the control plane's changes): written one at a
// time, read newest first by id with a cursor. The relay CLI, when it writes the database itself,
// records its changes here too (recordCliChange).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Database } from '../db/types.ts';

/** Longest route, target or address kept: a route pattern and an id are far shorter. */
const MAX_TEXT = 300;

export function clip(value: string): string {
  return value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value;
}

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

