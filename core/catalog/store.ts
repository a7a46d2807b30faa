// The catalog in Postgres: validated writes with reference checks, slugs, pagination.
// Every write fires NOTIFY through a trigger (001_catalog.sql); snapshots follow from it.
import { randomUUID } from 'node:crypto';
import type { TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { Database, Queryable } from '../db/types.ts';
import { firstProblem } from '../http/validate.ts';
import { KINDS, referencedIds, type Entity, type KindName } from './kinds.ts';
import type { AnyEntity } from './snapshot.ts';
import { slugCandidate, isValidSlug, reservedSlugReason } from './slug.ts';
import { daysInMonth } from '../http/calendar.ts';

export interface EntityRow {
  id: string;
  kind: string;
  slug: string;
  display_name: string;
  spec: Record<string, unknown>;
  secret_hash: string | null;
  sealed_value: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  revision: string | number;
}

export interface ListOptions {
  limit?: number;
  cursor?: string;
  /** Case-insensitive search over display name and slug. */
  q?: string;
}

export interface ListResult {
  items: AnyEntity[];
  nextCursor: string | null;
}

/** Secret material stored beside the spec; never part of it. */
export interface EntitySecrets {
  secretHash?: string | null;
  sealedValue?: string | null;
}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

export function rowToEntity(row: EntityRow): AnyEntity {
  const entity: AnyEntity = {
    metadata: { id: row.id, slug: row.slug, displayName: row.display_name, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) },
    spec: row.spec as AnyEntity['spec'],
  };
  if (row.kind === 'relay-keys') entity.keyHash = row.secret_hash ?? '';
  if (row.kind === 'host-keys') entity.sealedValue = row.sealed_value;
  return entity;
}

/** The cursor keeps created_at as Postgres prints it: full microsecond precision. */
function encodeCursor(row: { created_at_text: string; id: string }): string {
  return Buffer.from(JSON.stringify([row.created_at_text, row.id])).toString('base64url');
}

/**
 * created_at as Postgres prints it (`2026-01-31 12:00:00.123456+00`), or in ISO 8601 with a T
 * and Z: a date-time with a zone, nothing else Postgres would read as a timestamp ('now',
 * 'infinity', a bare date).
 */
const CURSOR_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-](\d{2})(:?(\d{2}))?)$/;

/**
 * Whether list() may cast the text ::timestamptz without Postgres refusing it (a 500): the
 * pattern above, a day that exists (no 30 February, which JavaScript would roll over into
 * March), a time of day that exists, a year Postgres accepts (year 0 is not one), and an offset
 * within Postgres's ±15:59.
 */
function isCursorTime(text: string): boolean {
  const m = CURSOR_TIME_RE.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const offsetOk = m[8] === 'Z' || (Number(m[9]) <= 15 && Number(m[11] ?? 0) <= 59);
  return day >= 1 && day <= daysInMonth(year, month) && offsetOk;
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string'
      && isCursorTime(parsed[0]) && isUuid(parsed[1])) {
      return [parsed[0], parsed[1]];
    }
  } catch { /* fall through */ }
  throw new RelayError('RELAY_ERR_BAD_REQUEST', 'cursor is not a cursor this API returned', { field: 'cursor' });
}

/** The (model, host) pair a pricing prices; a model-wide pricing has no host. */
function pricingPair(spec: Record<string, unknown>): string {
  return `${String(spec.modelId)}|${(spec.hostId as string | undefined) ?? ''}`;
}

/**
 * A merged spec without the optional fields an update set to null: null clears a field the
 * spec may leave out (a model's contextWindow, a host key's policyId), since leaving it out of
 * the partial spec keeps the stored value. A field whose own schema allows null keeps it.
 */
function withoutCleared(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
  const properties = (KINDS[kind].schema as TObject).properties;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    if (value === null && properties[key] && !Value.Check(properties[key], null)) continue;
    out[key] = value;
  }
  return out;
}

/** The policy tier each kind that names a policy needs. */
const POLICY_TIER_FOR: Partial<Record<KindName, 'relay' | 'host'>> = { 'relay-keys': 'relay', 'host-keys': 'host' };

export type AfterWrite = (kind: KindName, id: string) => Promise<void>;

/**
 * Checks a host against its provider's adapter: `spec.options` against the adapter's schema, and
 * `spec.baseUrl` against what the adapter can send to. A problem's pointer is relative to the spec.
 */
export type HostOptionsCheck = (adapterId: string, host: { options: Record<string, unknown>; baseUrl: string }) => { pointer: string; message: string } | null;

export class CatalogStore {
  private afterWrite: AfterWrite | null = null;
  private hostOptionsCheck: HostOptionsCheck | null = null;

  constructor(private readonly db: Database) {}

  /**
   * Runs after each committed write, before the write returns: the kernel uses it to apply the
   * change to this instance's snapshot at once (read-your-writes); other instances follow NOTIFY.
   */
  setAfterWrite(fn: AfterWrite): void {
    this.afterWrite = fn;
  }

  /** Set by the kernel: vendor plugins declare the schema of their hosts' options. */
  setHostOptionsCheck(fn: HostOptionsCheck): void {
    this.hostOptionsCheck = fn;
  }

  /** Every entity of every kind, for a full snapshot build. */
  async loadAll(): Promise<Array<{ kind: KindName; entity: AnyEntity }>> {
    // Ordered, so that a snapshot never depends on the order Postgres happens to return rows in.
    const res = await this.db.query<EntityRow>('SELECT * FROM catalog_entities ORDER BY created_at, id');
    return res.rows.map((row) => ({ kind: row.kind as KindName, entity: rowToEntity(row) }));
  }

  async loadById(id: string): Promise<{ kind: KindName; entity: AnyEntity } | null> {
    const res = await this.db.query<EntityRow>('SELECT * FROM catalog_entities WHERE id = $1', [id]);
    const row = res.rows[0];
    return row ? { kind: row.kind as KindName, entity: rowToEntity(row) } : null;
  }

  /** The highest revision issued so far (to detect missed notifications). */
  async currentRevision(): Promise<number> {
    const res = await this.db.query<{ last_value: string | number; is_called: boolean }>('SELECT last_value, is_called FROM catalog_revision');
    const row = res.rows[0];
    return row && row.is_called ? Number(row.last_value) : 0;
  }

  async list(kind: KindName, options: ListOptions = {}): Promise<ListResult> {
    const limit = Math.min(Math.max(options.limit ?? DEFAULT_PAGE, 1), MAX_PAGE);
    const params: unknown[] = [kind];
    let where = 'kind = $1';
    if (options.cursor) {
      const [createdAt, id] = decodeCursor(options.cursor);
      params.push(createdAt, id);
      where += ` AND (created_at, id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    if (options.q) {
      params.push(`%${options.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where += ` AND (display_name ILIKE $${params.length} OR slug ILIKE $${params.length})`;
    }
    params.push(limit + 1);
    const res = await this.db.query<EntityRow & { created_at_text: string }>(
      `SELECT *, created_at::text AS created_at_text FROM catalog_entities WHERE ${where} ORDER BY created_at, id LIMIT $${params.length}`, params);
    const rows = res.rows.slice(0, limit);
    return {
      items: rows.map(rowToEntity),
      nextCursor: res.rows.length > limit ? encodeCursor(rows[rows.length - 1]) : null,
    };
  }

  /** By id or slug; a UUID-form ref prefers the id. */
  async get(kind: KindName, ref: string): Promise<AnyEntity | null> {
    if (isUuid(ref)) {
      const byId = await this.db.query<EntityRow>('SELECT * FROM catalog_entities WHERE kind = $1 AND id = $2', [kind, ref]);
      if (byId.rows[0]) return rowToEntity(byId.rows[0]);
    }
    const bySlug = await this.db.query<EntityRow>('SELECT * FROM catalog_entities WHERE kind = $1 AND slug = $2', [kind, ref]);
    return bySlug.rows[0] ? rowToEntity(bySlug.rows[0]) : null;
  }

  async getById(kind: KindName, id: string): Promise<AnyEntity | null> {
    if (!isUuid(id)) return null;
    const res = await this.db.query<EntityRow>('SELECT * FROM catalog_entities WHERE kind = $1 AND id = $2', [kind, id]);
    return res.rows[0] ? rowToEntity(res.rows[0]) : null;
  }

  /** `id`: the new entity's id when the caller chose it (a catalog file refers to entities it creates). */
  async create(kind: KindName, metadata: { displayName: string; slug?: string }, spec: Record<string, unknown>, secrets: EntitySecrets = {}, id: string = randomUUID()): Promise<AnyEntity> {
    const full = this.validateSpec(kind, spec);
    const created = await this.db.transaction(async (tx) => {
      await this.checkReferences(tx, kind, full);
      if (kind === 'hosts') await this.checkHostOptions(tx, full);
      const slug = await this.chooseSlug(tx, kind, metadata.displayName, metadata.slug);
      if (kind === 'pricings') await this.checkPricingPairFree(tx, full, null);
      const res = await tx.query<EntityRow>(
        `INSERT INTO catalog_entities (id, kind, slug, display_name, spec, secret_hash, sealed_value)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [id, kind, slug, metadata.displayName, JSON.stringify(full), secrets.secretHash ?? null, secrets.sealedValue ?? null]);
      return rowToEntity(res.rows[0]);
    });
    await this.afterWrite?.(kind, created.metadata.id);
    return created;
  }

  /** Merges a partial spec into the stored one, validates the result, and stores it. */
  async update(kind: KindName, id: string, patch: { displayName?: string; spec?: Record<string, unknown> }, secrets?: EntitySecrets): Promise<AnyEntity> {
    const updated = await this.db.transaction(async (tx) => {
      const current = await tx.query<EntityRow>('SELECT * FROM catalog_entities WHERE kind = $1 AND id = $2 FOR UPDATE', [kind, id]);
      const row = current.rows[0];
      if (!row) throw new RelayError('RELAY_ERR_NOT_FOUND', `no ${KINDS[kind].singular} with id ${echoedName(id)}`);
      const merged = this.validateSpec(kind, withoutCleared(kind, { ...row.spec, ...(patch.spec ?? {}) }));
      await this.checkReferences(tx, kind, merged);
      if (kind === 'hosts') await this.checkHostOptions(tx, merged);
      if (kind === 'pricings' && pricingPair(merged) !== pricingPair(row.spec)) await this.checkPricingPairFree(tx, merged, id);
      if (kind === 'policies' && (merged.tier ?? 'relay') !== (row.spec.tier ?? 'relay')) await this.checkTierUnused(tx, id);
      const sets = ['spec = $3', 'updated_at = now()', "revision = nextval('catalog_revision')"];
      const params: unknown[] = [kind, id, JSON.stringify(merged)];
      if (patch.displayName !== undefined) {
        params.push(patch.displayName);
        sets.push(`display_name = $${params.length}`);
      }
      if (secrets?.secretHash !== undefined) {
        params.push(secrets.secretHash);
        sets.push(`secret_hash = $${params.length}`);
      }
      if (secrets?.sealedValue !== undefined) {
        params.push(secrets.sealedValue);
        sets.push(`sealed_value = $${params.length}`);
      }
      const res = await tx.query<EntityRow>(`UPDATE catalog_entities SET ${sets.join(', ')} WHERE kind = $1 AND id = $2 RETURNING *`, params);
      return rowToEntity(res.rows[0]);
    });
    await this.afterWrite?.(kind, id);
    return updated;
  }

  async delete(kind: KindName, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const exists = await tx.query<{ id: string; slug: string }>('SELECT id, slug FROM catalog_entities WHERE kind = $1 AND id = $2 FOR UPDATE', [kind, id]);
      if (!exists.rows[0]) throw new RelayError('RELAY_ERR_NOT_FOUND', `no ${KINDS[kind].singular} with id ${echoedName(id)}`);
      const referrers = await this.referrersOf(tx, kind, id);
      if (referrers.length > 0) {
        // By slug, the name operators see; the field that refers, in words (spec.bindings[].hostId -> bindings, hostId).
        const names = referrers.map((r) => `${KINDS[r.kind].singular} ${r.slug} (its ${r.path.replace(/^spec\./, '').replace(/\[\]/g, '').split('.').join(', ')})`).join('; ');
        throw new RelayError('RELAY_ERR_IN_USE', `${KINDS[kind].singular} ${exists.rows[0].slug} is still used by: ${names}. Change or delete those first.`);
      }
      await tx.query('DELETE FROM catalog_entities WHERE id = $1', [id]);
    });
    await this.afterWrite?.(kind, id);
  }

  /** A policy's tier may change only while no key names it (each kind of key needs its own tier). */
  private async checkTierUnused(tx: Queryable, policyId: string): Promise<void> {
    const keys = (await this.referrersOf(tx, 'policies', policyId)).filter((r) => POLICY_TIER_FOR[r.kind] !== undefined);
    if (keys.length === 0) return;
    const names = keys.map((r) => `${KINDS[r.kind].singular} ${r.slug}`).join(', ');
    throw new RelayError('RELAY_ERR_IN_USE', `/spec/tier: cannot change while keys name this policy: ${names}`, { field: '/spec/tier' });
  }

  /** Entities whose spec references `id`. */
  async referrersOf(tx: Queryable, kind: KindName, id: string): Promise<Array<{ kind: KindName; id: string; slug: string; path: string }>> {
    // A text match narrows the rows; the reference walk decides (an id could appear in free text).
    const res = await tx.query<EntityRow>('SELECT * FROM catalog_entities WHERE id <> $1 AND spec::text LIKE $2', [id, `%${id}%`]);
    const out: Array<{ kind: KindName; id: string; slug: string; path: string }> = [];
    for (const row of res.rows) {
      for (const ref of referencedIds(row.kind as KindName, row.spec)) {
        if (ref.id === id && ref.kind === kind) out.push({ kind: row.kind as KindName, id: row.id, slug: row.slug, path: `spec.${ref.path}` });
      }
    }
    return out;
  }

  /**
   * Runs `fn` with a store whose every write joins one transaction: all of them commit or none
   * does (a catalog file). The after-write hook runs for each write once the transaction committed.
   */
  async inTransaction<T>(fn: (store: CatalogStore, tx: Queryable) => Promise<T>): Promise<T> {
    const written: Array<[KindName, string]> = [];
    const result = await this.db.transaction(async (tx) => {
      const scoped = new CatalogStore(joinedTransaction(this.db.kind, tx));
      scoped.hostOptionsCheck = this.hostOptionsCheck;
      scoped.afterWrite = async (kind, id) => { written.push([kind, id]); };
      return fn(scoped, tx);
    });
    for (const [kind, id] of written) await this.afterWrite?.(kind, id);
    return result;
  }

  /** The spec as it would be stored (defaults filled, normalized); throws the API's 400 naming the field. */
  checkSpec(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
    return this.validateSpec(kind, spec);
  }

  private validateSpec(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
    const def = KINDS[kind];
    const input = { ...spec };
    for (const f of def.serverFields) delete input[f];
    for (const f of def.writeOnlyFields) delete input[f];
    const withDefaults = Value.Default(def.schema, Value.Clone(input)) as Record<string, unknown>;
    const problem = firstProblem(def.schema, withDefaults, '/spec');
    if (problem) throw new RelayError('RELAY_ERR_BAD_REQUEST', `${problem.pointer}: ${problem.message}`, { field: problem.pointer });
    const refused = def.check?.(withDefaults);
    if (refused) throw new RelayError('RELAY_ERR_BAD_REQUEST', `/spec${refused.pointer}: ${refused.message}`, { field: `/spec${refused.pointer}` });
    const stored = def.normalize ? def.normalize(withDefaults) : withDefaults;
    return { ...stored, ...Object.fromEntries(def.serverFields.filter((f) => spec[f] !== undefined).map((f) => [f, spec[f]])) };
  }

  private async checkHostOptions(tx: Queryable, spec: Record<string, unknown>): Promise<void> {
    if (!this.hostOptionsCheck) return;
    const res = await tx.query<{ adapter: string }>("SELECT spec->>'adapter' AS adapter FROM catalog_entities WHERE id = $1", [spec.providerId]);
    const adapter = res.rows[0]?.adapter;
    if (!adapter) return;
    const problem = this.hostOptionsCheck(adapter, { options: (spec.options ?? {}) as Record<string, unknown>, baseUrl: String(spec.baseUrl) });
    if (problem) {
      const pointer = `/spec${problem.pointer}`;
      throw new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: ${problem.message}`, { field: pointer });
    }
  }

  private async checkReferences(tx: Queryable, kind: KindName, spec: Record<string, unknown>): Promise<void> {
    const refs = referencedIds(kind, spec);
    if (refs.length === 0) return;
    const ids = [...new Set(refs.map((r) => r.id))];
    // FOR KEY SHARE: a delete of a referenced row (which locks it FOR UPDATE, then looks for
    // referrers) waits for this transaction, or this one for it, so a reference written at the
    // same moment as its target is deleted cannot be left pointing at nothing.
    const res = await tx.query<{ id: string; kind: string; tier: string | null }>(
      "SELECT id, kind, spec->>'tier' AS tier FROM catalog_entities WHERE id = ANY($1::uuid[]) FOR KEY SHARE", [ids]);
    const found = new Map(res.rows.map((r) => [r.id, r]));
    for (const ref of refs) {
      const field = `/spec/${ref.path.replace(/\[\]/g, '').replace(/\./g, '/')}`;
      const target = found.get(ref.id);
      if (target?.kind !== ref.kind) {
        throw new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: no ${KINDS[ref.kind].singular} with id ${echoedName(ref.id)}`, { field });
      }
      // DESIGN: relay-tier policies grant models to relay keys; host-tier ones limit host keys.
      const tier = POLICY_TIER_FOR[kind];
      if (ref.kind === 'policies' && tier && (target.tier ?? 'relay') !== tier) {
        throw new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: policy ${echoedName(ref.id)} is a ${target.tier ?? 'relay'}-tier policy; a ${KINDS[kind].singular} needs a ${tier}-tier one`, { field });
      }
    }
  }

  /**
   * Refuses a second pricing for one (model, host) pair, or a second model-wide one (no hostId):
   * which of two would price a request would depend on row order. The advisory lock, held until
   * the transaction ends, serializes writers of one pair, so two concurrent creates cannot both
   * find the pair free.
   */
  private async checkPricingPairFree(tx: Queryable, spec: Record<string, unknown>, selfId: string | null): Promise<void> {
    const modelId = spec.modelId as string;
    const hostId = (spec.hostId as string | undefined) ?? '';
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`relay.pricings|${pricingPair(spec)}`]);
    const res = await tx.query<{ id: string; slug: string }>(
      `SELECT id, slug FROM catalog_entities
       WHERE kind = 'pricings' AND spec->>'modelId' = $1 AND COALESCE(spec->>'hostId', '') = $2 AND id IS DISTINCT FROM $3::uuid
       ORDER BY created_at, id LIMIT 1`,
      [modelId, hostId, selfId]);
    const existing = res.rows[0];
    if (!existing) return;
    const field = hostId ? '/spec/hostId' : '/spec/modelId';
    const what = hostId ? `model ${echoedName(modelId)} on host ${echoedName(hostId)}` : `model ${echoedName(modelId)} on every host without its own pricing (no hostId)`;
    throw new RelayError('RELAY_ERR_CONFLICT', `${field}: pricing ${existing.slug} (${existing.id}) already prices ${what}; change that one instead`, { field });
  }

  private async chooseSlug(tx: Queryable, kind: KindName, displayName: string, proposed?: string): Promise<string> {
    if (proposed !== undefined) {
      if (!isValidSlug(proposed)) {
        throw new RelayError('RELAY_ERR_BAD_REQUEST', '/metadata/slug: must be 1-63 lowercase letters, digits, dots, dashes or underscores, starting with a letter or digit', { field: '/metadata/slug' });
      }
      const reserved = reservedSlugReason(kind, proposed);
      if (reserved) throw new RelayError('RELAY_ERR_BAD_REQUEST', `/metadata/slug: ${reserved}`, { field: '/metadata/slug' });
      const taken = await tx.query('SELECT 1 FROM catalog_entities WHERE kind = $1 AND slug = $2', [kind, proposed]);
      if (taken.rows.length > 0) throw new RelayError('RELAY_ERR_CONFLICT', `/metadata/slug: ${echoedName(proposed)} is already used by another ${KINDS[kind].singular}`, { field: '/metadata/slug' });
      return proposed;
    }
    const base = slugCandidate(displayName);
    const res = await tx.query<{ slug: string }>('SELECT slug FROM catalog_entities WHERE kind = $1 AND (slug = $2 OR slug LIKE $3)', [kind, base, `${base}-%`]);
    const taken = new Set(res.rows.map((r) => r.slug));
    // A derived slug is never a reserved one either: "Health" names host key health-2.
    const free = (slug: string) => !taken.has(slug) && reservedSlugReason(kind, slug) === null;
    if (free(base)) return base;
    for (let n = 2; ; n++) if (free(`${base}-${n}`)) return `${base}-${n}`;
  }
}

/** A Database whose transactions are the one already open (nested writes join it). */
function joinedTransaction(kind: Database['kind'], tx: Queryable): Database {
  const unavailable = (): never => { throw new Error('not available inside a catalog transaction'); };
  return {
    kind,
    query: (sql, params) => tx.query(sql, params),
    exec: (sql) => tx.exec(sql),
    transaction: (fn) => fn(tx),
    listen: async () => unavailable(),
    ping: async () => undefined,
    close: async () => undefined,
  };
}

export type { Entity };
