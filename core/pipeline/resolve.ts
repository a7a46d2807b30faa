// The kernel's default resolveModel: from the snapshot only (no query per request).
// A model is reachable when the key's policy grants it and it has an enabled binding whose
// host is enabled, whose provider's adapter is loaded and can serve the inbound shape, and
// which has a healthy host key allowed by that key's host-tier policy (no-route-error.ts says why not).
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Host, HostKey, Model, Policy, Provider } from '../catalog/kinds.ts';
import type { ModelResolver, Principal, Route, ShapeId, VendorAdapter } from '../hooks.ts';
import type { KeyHealth } from './key-health.ts';
import { noRouteError } from './no-route-error.ts';
import { bindingKey, type BindingMeter } from './binding-meter.ts';
import { orderByStrategy } from './balancing.ts';
import { sameKindOfShape } from '../canonical/counting-shapes.ts';

export interface ResolverDeps {
  snapshot: () => CatalogSnapshot;
  adapters: ReadonlyMap<string, VendorAdapter>;
  /** Shapes that can be translated (an inbound codec exists for them). */
  translatable: (shape: ShapeId) => boolean;
  health: KeyHealth;
  /** In-flight counts and latencies per binding, for a model's spec.balancing (balancing.ts). */
  meter?: BindingMeter;
  /** A host as it is sent to, its sealed header values opened (sendable-host.ts); without it, as the snapshot holds it. */
  sendable?: (host: Host) => Host;
}

export function policyGrants(policy: Policy, modelId: string): boolean {
  const ids = policy.spec.modelIds;
  return ids === '*' || ids.includes(modelId);
}

/** Weighted random order (Efraimidis-Spirakis): heavier items tend to come first. */
function weightedOrder<T>(items: T[], weight: (item: T) => number): T[] {
  if (items.length < 2) return items;
  return items
    .map((item) => ({ item, key: Math.random() ** (1 / Math.max(weight(item), 1e-6)) }))
    .sort((a, b) => b.key - a.key)
    .map((x) => x.item);
}

interface Servable {
  host: Host;
  provider: Provider;
  adapter: VendorAdapter;
  shapes: readonly ShapeId[];
  upstreamModel: string;
  binding: Model['spec']['bindings'][number];
}

function servableBindings(model: Model, shape: ShapeId, snapshot: CatalogSnapshot, deps: ResolverDeps): Servable[] {
  const out: Servable[] = [];
  for (const binding of model.spec.bindings) {
    if (!binding.enabled || binding.weight <= 0) continue;
    const host = snapshot.hosts.get(binding.hostId);
    if (!host || !host.spec.enabled) continue;
    const provider = snapshot.providers.get(host.spec.providerId);
    const adapter = provider ? deps.adapters.get(provider.spec.adapter) : undefined;
    if (!provider || !adapter) continue;
    const shapes = provider.spec.shapes ? adapter.shapes.filter((s) => provider.spec.shapes!.includes(s)) : adapter.shapes;
    const direct = shapes.includes(shape);
    const target = !direct && deps.translatable(shape) ? adapter.translationShape(shapes, shape) : null;
    const translated = target !== null && sameKindOfShape(shape, target);
    if (!direct && !translated) continue;
    out.push({ host, provider, adapter, shapes, upstreamModel: binding.upstreamModel, binding });
  }
  return out;
}

function keyAllowed(key: HostKey, model: Model, snapshot: CatalogSnapshot): boolean {
  if (!key.spec.policyId) return true;
  const policy = snapshot.policies.get(key.spec.policyId);
  // Only a host-tier policy limits a host key; a key that names another is not used (fail closed).
  return policy?.spec.tier === 'host' ? policyGrants(policy, model.metadata.id) : false;
}

/** One servable binding of a model for a shape, with its routes made once per snapshot. */
interface Candidate {
  binding: Servable;
  /** A route per usable host key (weight > 0, allowed by the key's policy), with the key's weight. */
  keyed: Array<{ route: Route; weight: number }>;
  /** The proxy-mode route (the caller's own credential, no host key). */
  proxy: Route;
  /** The binding as binding-meter.ts names it. */
  meterKey: string;
}

/**
 * Candidates per snapshot, model and shape. A snapshot never changes (a change makes a new one),
 * so they are built once and reused until it is replaced; per request only key health and the
 * weighted order remain. Building them per request was ~5% of a request's allocations.
 */
const candidateCache = new WeakMap<CatalogSnapshot, Map<string, Candidate[]>>();

function candidatesFor(model: Model, shape: ShapeId, snapshot: CatalogSnapshot, deps: ResolverDeps): Candidate[] {
  let bySnapshot = candidateCache.get(snapshot);
  if (!bySnapshot) {
    bySnapshot = new Map();
    candidateCache.set(snapshot, bySnapshot);
  }
  const cacheKey = `${model.metadata.id} ${shape}`;
  let candidates = bySnapshot.get(cacheKey);
  if (!candidates) {
    candidates = servableBindings(model, shape, snapshot, deps).map((b) => {
      // Opened here, once per snapshot: routes are reused until the snapshot is replaced.
      const host = deps.sendable ? deps.sendable(b.host) : b.host;
      const base = { model, binding: b.binding, host, provider: b.provider, upstreamModel: b.upstreamModel, adapter: b.adapter, shapes: b.shapes };
      const keyed = snapshot.hostKeysOfHost(b.host.metadata.id)
        .filter((k) => k.spec.weight > 0 && keyAllowed(k, model, snapshot))
        .map((hostKey) => ({ route: { ...base, hostKey }, weight: hostKey.spec.weight }));
      return { binding: b, keyed, proxy: { ...base, hostKey: null }, meterKey: bindingKey(base) };
    });
    bySnapshot.set(cacheKey, candidates);
  }
  return candidates;
}

export function createCatalogResolver(deps: ResolverDeps): ModelResolver {
  return (principal: Principal, name: string, options) => {
    const snapshot = deps.snapshot();
    const model = snapshot.modelBySlug(name) ?? snapshot.models.get(name);
    if (!model) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${echoedName(name)}\` does not exist.`);
    if (!policyGrants(principal.policy, model.metadata.id)) {
      throw new RelayError('RELAY_ERR_MODEL_NOT_GRANTED', `This relay key's policy does not grant the model \`${echoedName(name)}\`.`);
    }
    const weighted = weightedOrder(candidatesFor(model, options.shape, snapshot, deps), (c) => c.binding.binding.weight);
    const candidates = orderByStrategy(model.spec.balancing, weighted, deps.meter, (c) => c.meterKey, (c) => c.binding.binding.weight);
    if (candidates.length === 0) {
      throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${echoedName(name)}\` has no enabled binding that serves this API.`);
    }
    const routes: Route[] = [];
    for (const c of candidates) {
      if (principal.passthroughCredential) {
        // Proxy mode: the caller's own credential goes only to upstreams of the inbound shape
        // (forwarded verbatim), never translated to another vendor's host.
        if (!c.binding.shapes.includes(options.shape)) continue;
        const host = c.binding.host.metadata;
        if (!principal.explicitHost || principal.explicitHost === host.id || principal.explicitHost === host.slug) routes.push(c.proxy);
        continue;
      }
      let healthy: Array<{ route: Route; weight: number }> | null = null;
      for (const k of c.keyed) {
        if (deps.health.isAvailable(k.route.hostKey!)) (healthy ??= []).push(k);
      }
      if (healthy) for (const k of weightedOrder(healthy, (x) => x.weight)) routes.push(k.route);
    }
    if (routes.length === 0) {
      if (principal.passthroughCredential) {
        throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', principal.explicitHost
          ? `The model \`${echoedName(name)}\` has no enabled binding on host \`${echoedName(principal.explicitHost)}\` that serves this API.`
          : `The model \`${echoedName(name)}\` has no enabled binding that serves this API in proxy mode.`);
      }
      throw noRouteError({ name, hosts: candidates.map((c) => c.binding.host), snapshot, health: deps.health, allowed: (k) => keyAllowed(k, model, snapshot) });
    }
    return routes;
  };
}

/**
 * Models the principal is served: granted, with a servable binding and an enabled key its policy
 * allows. A key's momentary health is not looked at: a model whose only key is cooling down (a
 * 429) stays listed, since a client that saves the list then (Codex's models document) would lose
 * the model until it fetched the list again; requests meanwhile get the 429 (or 503) with retry-after.
 */
export function reachableModels(principal: Principal, snapshot: CatalogSnapshot, deps: ResolverDeps, shape?: ShapeId): Model[] {
  const out: Model[] = [];
  for (const model of snapshot.models.values()) {
    if (!policyGrants(principal.policy, model.metadata.id)) continue;
    const bindings = model.spec.bindings.filter((b) => b.enabled && b.weight > 0);
    const reachable = bindings.some((binding) => {
      const host = snapshot.hosts.get(binding.hostId);
      if (!host || !host.spec.enabled) return false;
      const provider = snapshot.providers.get(host.spec.providerId);
      const adapter = provider ? deps.adapters.get(provider.spec.adapter) : undefined;
      if (!adapter) return false;
      if (shape && servableBindings({ ...model, spec: { ...model.spec, bindings: [binding] } }, shape, snapshot, deps).length === 0) return false;
      if (principal.passthroughCredential) return true;
      return snapshot.hostKeysOfHost(host.metadata.id).some((k) => k.spec.enabled && k.spec.weight > 0 && keyAllowed(k, model, snapshot));
    });
    if (reachable) out.push(model);
  }
  return out.sort((a, b) => a.metadata.slug.localeCompare(b.metadata.slug));
}
