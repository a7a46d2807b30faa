// The in-memory catalog the hot path reads: immutable once built, indexed for lookups
// (relay key by hash, model by slug, host keys by host). A change builds a new snapshot
// from the previous one plus the changed entity; readers never see a half-applied change.
import type {
  Entity, Host, HostKey, KindName, KindSpecs, Model, Policy, Pricing, Provider, RateLimit, RelayKey,
} from './kinds.ts';

export type AnyEntity = Entity<KindSpecs[KindName]> & { keyHash?: string; sealedValue?: string | null };

export interface CatalogSnapshot {
  /** Monotonic build counter of this instance. */
  readonly version: number;
  readonly builtAt: number;
  readonly providers: ReadonlyMap<string, Provider>;
  readonly hosts: ReadonlyMap<string, Host>;
  readonly models: ReadonlyMap<string, Model>;
  readonly hostKeys: ReadonlyMap<string, HostKey>;
  readonly rateLimits: ReadonlyMap<string, RateLimit>;
  readonly policies: ReadonlyMap<string, Policy>;
  readonly pricings: ReadonlyMap<string, Pricing>;
  readonly relayKeys: ReadonlyMap<string, RelayKey>;
  relayKeyByHash(hash: string): RelayKey | undefined;
  modelBySlug(slug: string): Model | undefined;
  hostKeysOfHost(hostId: string): readonly HostKey[];
  /** Pricing for a model, preferring one specific to the host. */
  pricingFor(modelId: string, hostId: string | null): Pricing | undefined;
  /** Entities of a kind by id. */
  byKind(kind: KindName): ReadonlyMap<string, AnyEntity>;
  /** Number of entities of each kind. */
  counts(): Record<KindName, number>;
}

type Tables = { [K in KindName]: Map<string, AnyEntity> };

const EMPTY_KEYS: readonly HostKey[] = Object.freeze([]);

class Snapshot implements CatalogSnapshot {
  readonly builtAt = Date.now();
  private readonly keyHashIndex = new Map<string, RelayKey>();
  private readonly slugIndex = new Map<string, Model>();
  private readonly keysByHost = new Map<string, HostKey[]>();
  private readonly pricingIndex = new Map<string, Pricing>();

  constructor(readonly version: number, private readonly tables: Tables) {
    for (const key of tables['relay-keys'].values()) this.keyHashIndex.set((key as RelayKey).keyHash, key as RelayKey);
    for (const model of tables.models.values()) this.slugIndex.set(model.metadata.slug, model as Model);
    for (const hk of tables['host-keys'].values()) {
      const hostKey = hk as HostKey;
      const list = this.keysByHost.get(hostKey.spec.hostId);
      if (list) list.push(hostKey);
      else this.keysByHost.set(hostKey.spec.hostId, [hostKey]);
    }
    // The store refuses a second pricing for a pair, but rows written before it did may hold
    // two: the oldest wins, whatever order the tables were filled in.
    for (const p of tables.pricings.values()) {
      const pricing = p as Pricing;
      const pair = `${pricing.spec.modelId}|${pricing.spec.hostId ?? ''}`;
      const held = this.pricingIndex.get(pair);
      if (!held || isOlder(pricing, held)) this.pricingIndex.set(pair, pricing);
    }
  }

  get providers() { return this.tables.providers as unknown as ReadonlyMap<string, Provider>; }
  get hosts() { return this.tables.hosts as unknown as ReadonlyMap<string, Host>; }
  get models() { return this.tables.models as unknown as ReadonlyMap<string, Model>; }
  get hostKeys() { return this.tables['host-keys'] as unknown as ReadonlyMap<string, HostKey>; }
  get rateLimits() { return this.tables['rate-limits'] as unknown as ReadonlyMap<string, RateLimit>; }
  get policies() { return this.tables.policies as unknown as ReadonlyMap<string, Policy>; }
  get pricings() { return this.tables.pricings as unknown as ReadonlyMap<string, Pricing>; }
  get relayKeys() { return this.tables['relay-keys'] as unknown as ReadonlyMap<string, RelayKey>; }

  relayKeyByHash(hash: string): RelayKey | undefined { return this.keyHashIndex.get(hash); }
  modelBySlug(slug: string): Model | undefined { return this.slugIndex.get(slug); }
  hostKeysOfHost(hostId: string): readonly HostKey[] { return this.keysByHost.get(hostId) ?? EMPTY_KEYS; }

  pricingFor(modelId: string, hostId: string | null): Pricing | undefined {
    return (hostId ? this.pricingIndex.get(`${modelId}|${hostId}`) : undefined) ?? this.pricingIndex.get(`${modelId}|`);
  }

  byKind(kind: KindName): ReadonlyMap<string, AnyEntity> { return this.tables[kind]; }

  counts(): Record<KindName, number> {
    const out = {} as Record<KindName, number>;
    for (const kind of Object.keys(this.tables) as KindName[]) out[kind] = this.tables[kind].size;
    return out;
  }

  /** The tables, for building the next snapshot. */
  copyTables(): Tables {
    const out = {} as Tables;
    for (const kind of Object.keys(this.tables) as KindName[]) out[kind] = new Map(this.tables[kind]);
    return out;
  }
}

/** Creation order: createdAt (ISO 8601 in UTC, so text order is time order), then id. */
function isOlder(a: AnyEntity, b: AnyEntity): boolean {
  if (a.metadata.createdAt !== b.metadata.createdAt) return a.metadata.createdAt < b.metadata.createdAt;
  return a.metadata.id < b.metadata.id;
}

export function emptyTables(): Tables {
  return {
    providers: new Map(), hosts: new Map(), models: new Map(), 'host-keys': new Map(),
    'rate-limits': new Map(), policies: new Map(), pricings: new Map(), 'relay-keys': new Map(), budgets: new Map(),
  };
}

let versionCounter = 0;

/** Builds a snapshot from full tables. */
export function buildSnapshot(tables: Tables): CatalogSnapshot {
  return new Snapshot(++versionCounter, tables);
}

/** A new snapshot with one entity put (or removed when `entity` is null). */
export function applyChange(previous: CatalogSnapshot, kind: KindName, id: string, entity: AnyEntity | null): CatalogSnapshot {
  const tables = (previous as Snapshot).copyTables();
  if (entity) tables[kind].set(id, entity);
  else tables[kind].delete(id);
  return buildSnapshot(tables);
}
