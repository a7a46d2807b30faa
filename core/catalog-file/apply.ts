// `relay catalog apply`: makes the catalog match a catalog file, by slug, through the admin
// API's own layer (the store's validation and reference checks, the provider and host-key
// writers). Everything is checked first and every write joins one transaction: a bad file
// changes nothing. A dry run does the same writes and rolls them back.
import { randomUUID } from 'node:crypto';
import { KINDS, type KindName } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';
import { isValidSlug, reservedSlugReason } from '../catalog/slug.ts';
import type { CatalogStore, EntitySecrets } from '../catalog/store.ts';
import type { SpecWriter } from '../control/catalog-routes.ts';
import { withoutServerFields } from '../control/public-entity.ts';
import { webhooksToStore } from '../budgets/webhook-sealing.ts';
import { headersToStore } from '../catalog/host-header-sealing.ts';
import { safeEqual } from '../crypto/relay-keys.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import { firstProblem } from '../http/validate.ts';
import { CatalogDocumentSchema, FILE_KINDS, mapReferences, type CatalogDocument, type FileKind, type SpecReference } from './document.ts';

export interface CatalogChange {
  action: 'create' | 'update' | 'delete';
  kind: FileKind;
  slug: string;
  /** The entity's id (a dry run's create: the id it would have had). */
  id: string;
  /** What an update changes: spec fields, displayName, sealedValue. */
  fields?: string[];
}

export interface ApplyOutcome {
  changes: CatalogChange[];
  /** Entities of the file already as it says. */
  unchanged: number;
  /** Entities the file lacks, left in place (without prune). */
  kept: number;
  dryRun: boolean;
  prune: boolean;
}

export interface ApplyOptions {
  dryRun?: boolean;
  prune?: boolean;
}

export interface ApplyDeps {
  store: CatalogStore;
  sealer: Sealer;
  /** The admin API's writers (core/control/provider-writer.ts, host-key-routes.ts). */
  writers: { providers: SpecWriter; 'host-keys': SpecWriter };
}

interface Planned {
  kind: FileKind;
  slug: string;
  label: string;
  id: string;
  displayName: string;
  /** The spec as the store will hold it (ids, defaults). */
  spec: Record<string, unknown>;
  existing: AnyEntity | null;
  sealedValue?: string;
}

class DryRunRollback extends Error {
  constructor(readonly outcome: ApplyOutcome) {
    super('dry run');
  }
}

function fileError(label: string, pointer: string, message: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${label}: ${pointer}: ${message}`, { field: `${label}${pointer}` });
}

/** A store or writer error, said of the entity it is about. */
async function about<T>(label: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RelayError) throw new RelayError(err.code, `${label}: ${err.message}`, { field: `${label}${err.field ?? ''}` });
    throw err;
  }
}

/** JSON with sorted keys: two specs are the same when this is. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v));
}

/** Far deeper than any kind's spec goes (none nests past a handful of levels). */
const MAX_SPEC_NESTING = 32;

/** Whether arrays and objects in `value` nest deeper than `max` levels; iterative, so it cannot overflow the stack itself. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Checks the file's form, its slugs and its specs' nesting; returns it typed. */
export function parseCatalogDocument(raw: unknown): CatalogDocument {
  const problem = firstProblem(CatalogDocumentSchema, raw);
  if (problem) {
    const hint = problem.pointer === '/version' ? ' (the first line of a catalog file is version: 1)' : '';
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `catalog file: ${problem.pointer}: ${problem.message}${hint}`, { field: problem.pointer });
  }
  const doc = raw as CatalogDocument;
  for (const kind of FILE_KINDS) {
    const seen = new Set<string>();
    for (const [i, entity] of (doc[kind] ?? []).entries()) {
      const where = `${kind}[${i}]`;
      if (!isValidSlug(entity.slug)) throw fileError(where, '/slug', `${JSON.stringify(echoedName(entity.slug))} must be 1-63 lowercase letters, digits, dots, dashes or underscores, starting with a letter or digit`);
      const reserved = reservedSlugReason(kind, entity.slug);
      if (reserved) throw fileError(where, '/slug', reserved);
      if (seen.has(entity.slug)) throw fileError(`${kind}/${entity.slug}`, '/slug', `appears twice in ${kind}`);
      seen.add(entity.slug);
      // Copying and comparing specs recurse: a spec nested past any kind's shape is refused first.
      if (nestedDeeperThan(entity.spec, MAX_SPEC_NESTING)) throw fileError(`${kind}/${entity.slug}`, '/spec', `nests arrays and objects deeper than ${MAX_SPEC_NESTING} levels`);
    }
  }
  return doc;
}

export async function applyCatalogDocument(deps: ApplyDeps, raw: unknown, options: ApplyOptions = {}): Promise<ApplyOutcome> {
  const doc = parseCatalogDocument(raw);
  const prune = options.prune === true;
  const dryRun = options.dryRun === true;
  try {
    return await deps.store.inTransaction(async (store, tx) => {
      // Two instances applying the file at start: one after the other, the second finds nothing to do.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('relay.catalog-file'))");
      const current = await store.loadAll();
      const plan = planChanges(deps, doc, current, prune);
      const outcome: ApplyOutcome = { changes: plan.changes, unchanged: plan.unchanged, kept: plan.kept, dryRun, prune };
      await execute(deps, store, plan);
      if (dryRun) throw new DryRunRollback(outcome);
      return outcome;
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.outcome;
    throw err;
  }
}

interface Plan {
  changes: CatalogChange[];
  unchanged: number;
  kept: number;
  creates: Array<Planned & { secrets?: EntitySecrets }>;
  updates: Array<Planned & { patch: Record<string, unknown>; displayNameChanged: boolean; secrets?: EntitySecrets }>;
  deletes: Array<{ kind: FileKind; entity: AnyEntity }>;
}

function planChanges(deps: ApplyDeps, doc: CatalogDocument, current: Array<{ kind: KindName; entity: AnyEntity }>, prune: boolean): Plan {
  const stored = new Map<KindName, Map<string, AnyEntity>>();
  for (const { kind, entity } of current) {
    if (!stored.has(kind)) stored.set(kind, new Map());
    stored.get(kind)!.set(entity.metadata.slug, entity);
  }
  const storedOf = (kind: KindName, slug: string) => stored.get(kind)?.get(slug) ?? null;

  // Ids first, so that references to entities the file creates resolve before any write.
  const ids = new Map<string, string>();
  for (const kind of FILE_KINDS) {
    for (const entity of doc[kind] ?? []) ids.set(`${kind}/${entity.slug}`, storedOf(kind, entity.slug)?.metadata.id ?? randomUUID());
  }
  const resolve = (label: string) => (ref: SpecReference): string => {
    const inFile = ids.get(`${ref.kind}/${ref.value}`);
    if (inFile) return inFile;
    const managed = (FILE_KINDS as readonly KindName[]).includes(ref.kind);
    const existing = storedOf(ref.kind, ref.value);
    if (existing && (!managed || !prune)) return existing.metadata.id;
    const singular = KINDS[ref.kind].singular;
    const where = !managed ? 'in the catalog' : prune ? `in the file (${existing ? 'the catalog has one, but --prune deletes what the file lacks' : 'nor in the catalog'})` : 'in the file nor in the catalog';
    throw fileError(label, ref.pointer, `no ${singular} with slug ${JSON.stringify(echoedName(ref.value))} ${where}`);
  };

  const plan: Plan = { changes: [], unchanged: 0, kept: 0, creates: [], updates: [], deletes: [] };
  for (const kind of FILE_KINDS) {
    for (const entity of doc[kind] ?? []) {
      const label = `${kind}/${entity.slug}`;
      if (kind === 'host-keys' && entity.spec.value !== undefined) {
        throw fileError(label, '/spec/value', 'a catalog file holds no plaintext secret: name an environment variable (valueFrom: {kind: env, env: NAME}) or give sealedValue (printf %s "$SECRET" | relay master-key seal)');
      }
      if (kind !== 'host-keys' && entity.sealedValue !== undefined) throw fileError(label, '/sealedValue', 'only host keys have a sealed value');
      const existing = storedOf(kind, entity.slug);
      const withIds = mapReferences(kind, withoutServerFields(kind, entity.spec), resolve(label));
      const spec = withErrorsAbout(label, () => deps.store.checkSpec(kind, withIds));
      // A budget's webhook URLs: sealed as the API seals them; one the catalog holds already keeps its stored form.
      if (kind === 'budgets' && Array.isArray(spec.alertWebhooks)) {
        const stored = (existing?.spec as { alertWebhooks?: Array<{ url: string }> } | undefined)?.alertWebhooks ?? [];
        spec.alertWebhooks = withErrorsAbout(label, () => webhooksToStore(deps.sealer, spec.alertWebhooks, stored));
      }
      // A host's header values: sealed as the API seals them; one the catalog holds already keeps its stored form.
      if (kind === 'hosts' && spec.headers) {
        const stored = (existing?.spec as { headers?: Record<string, string> } | undefined)?.headers ?? {};
        spec.headers = withErrorsAbout(label, () => headersToStore(deps.sealer, spec.headers, stored));
      }
      const planned: Planned = {
        kind, slug: entity.slug, label, id: ids.get(label)!, displayName: entity.displayName ?? entity.slug, spec, existing, sealedValue: entity.sealedValue,
      };
      const secrets = kind === 'host-keys' ? hostKeySecrets(deps, planned) : undefined;
      if (!existing) {
        plan.creates.push({ ...planned, secrets });
        plan.changes.push({ action: 'create', kind, slug: entity.slug, id: planned.id });
        continue;
      }
      const before = existing.spec as Record<string, unknown>;
      const changedFields = [...new Set([...Object.keys(before), ...Object.keys(spec)])]
        .filter((field) => !(KINDS[kind].serverFields.includes(field)) && canonical(before[field]) !== canonical(spec[field])).sort();
      const displayNameChanged = existing.metadata.displayName !== planned.displayName;
      const fields = [...(displayNameChanged ? ['displayName'] : []), ...changedFields, ...(secrets?.sealedValue !== undefined ? ['sealedValue'] : [])];
      if (fields.length === 0) {
        plan.unchanged++;
        continue;
      }
      // A field the file leaves out is cleared (null), as an update through the API clears it.
      const patch = Object.fromEntries(changedFields.map((field) => [field, spec[field] === undefined ? null : spec[field]]));
      plan.updates.push({ ...planned, patch, displayNameChanged, secrets });
      plan.changes.push({ action: 'update', kind, slug: entity.slug, id: planned.id, fields });
    }
  }
  for (const kind of FILE_KINDS) {
    for (const entity of stored.get(kind)?.values() ?? []) {
      if (ids.has(`${kind}/${entity.metadata.slug}`)) continue;
      if (!prune) {
        plan.kept++;
        continue;
      }
      plan.deletes.push({ kind, entity });
      plan.changes.push({ action: 'delete', kind, slug: entity.metadata.slug, id: entity.metadata.id });
    }
  }
  return plan;
}

function withErrorsAbout<T>(label: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RelayError) throw new RelayError(err.code, `${label}: ${err.message}`, { field: `${label}${err.field ?? ''}` });
    throw err;
  }
}

/**
 * A host key's secret from the file: an environment variable (checked by the API's host-key
 * writer), or a sealed value that must open under this instance's master key. Undefined: no
 * change to the stored value.
 */
function hostKeySecrets(deps: ApplyDeps, planned: Planned): EntitySecrets | undefined {
  const valueFrom = planned.spec.valueFrom as { kind: 'env' | 'stored' };
  const { label, existing, sealedValue } = planned;
  if (valueFrom.kind === 'env') {
    if (sealedValue !== undefined) throw fileError(label, '/sealedValue', 'is only used when spec.valueFrom.kind is stored');
    const writer = deps.writers['host-keys'];
    const written = withErrorsAbout(label, () => (existing ? writer.forUpdate(existing, { valueFrom: planned.spec.valueFrom }) : writer.forCreate(planned.spec)));
    return written.secrets;
  }
  if (sealedValue === undefined) {
    if (existing?.sealedValue) return undefined;
    throw fileError(label, '/sealedValue', 'is required when spec.valueFrom.kind is stored (printf %s "$SECRET" | relay master-key seal), or use valueFrom: {kind: env, env: NAME}');
  }
  let plaintext: string;
  try {
    plaintext = deps.sealer.open(sealedValue);
  } catch (err) {
    throw fileError(label, '/sealedValue', `does not open with this instance's RELAY_MASTER_KEY (${(err as Error).message}); seal it again with relay master-key seal`);
  }
  if (existing?.sealedValue) {
    if (existing.sealedValue === sealedValue) return undefined;
    let before: string | null = null;
    try {
      before = deps.sealer.open(existing.sealedValue);
    } catch { /* sealed under a key this instance lacks: the file's value replaces it */ }
    if (before !== null && safeEqual(before, plaintext)) return undefined;
  }
  return { sealedValue };
}

async function execute(deps: ApplyDeps, store: CatalogStore, plan: Plan): Promise<void> {
  const writerFor = (kind: FileKind): SpecWriter | undefined => (kind === 'providers' ? deps.writers.providers : undefined);
  for (const kind of FILE_KINDS) {
    const creates = plan.creates.filter((p) => p.kind === kind);
    const updates = plan.updates.filter((p) => p.kind === kind);
    // Models may fall back to models the file creates: create them without fallbacks, then set those.
    const deferFallbacks = kind === 'models';
    if (!deferFallbacks) await runUpdates(store, updates, writerFor(kind));
    for (const p of creates) {
      const { fallbacks: _later, ...withoutFallbacks } = p.spec;
      const spec = deferFallbacks ? withoutFallbacks : p.spec;
      const written = writerFor(kind) ? await about(p.label, () => writerFor(kind)!.forCreate(spec)) : { spec };
      await about(p.label, () => store.create(kind, { displayName: p.displayName, slug: p.slug }, written.spec, p.secrets ?? written.secrets, p.id));
    }
    if (deferFallbacks) {
      await runUpdates(store, updates, undefined);
      for (const p of creates) {
        if (p.spec.fallbacks !== undefined) await about(p.label, () => store.update(kind, p.id, { spec: { fallbacks: p.spec.fallbacks } }));
      }
    }
  }
  // Deletes last, referrers first; models that fall back to each other let go of each other first.
  for (const { kind, entity } of plan.deletes.filter((d) => d.kind === 'models' && (d.entity.spec as { fallbacks?: unknown[] }).fallbacks?.length)) {
    await about(`${kind}/${entity.metadata.slug}`, () => store.update(kind, entity.metadata.id, { spec: { fallbacks: null } }));
  }
  for (const kind of [...FILE_KINDS].reverse()) {
    for (const { entity } of plan.deletes.filter((d) => d.kind === kind)) {
      await about(`${kind}/${entity.metadata.slug}`, () => store.delete(kind, entity.metadata.id));
    }
  }
}

async function runUpdates(store: CatalogStore, updates: Plan['updates'], writer: SpecWriter | undefined): Promise<void> {
  for (const p of updates) {
    const written = writer ? await about(p.label, () => writer.forUpdate(p.existing!, p.patch)) : { spec: p.patch };
    await about(p.label, () => store.update(p.kind, p.id, { displayName: p.displayNameChanged ? p.displayName : undefined, spec: written.spec }, p.secrets ?? written.secrets));
  }
}
