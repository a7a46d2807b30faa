// The kernel's default resolveModel: from the snapshot only (no query per request).
// A model is reachable when the key's policy grants it and it has an enabled binding whose
// host is enabled, whose provider's adapter is loaded and can serve the inbound shape, and
// which has a healthy host key allowed by that key's host-tier policy.
import { RelayError } from '../errors.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Host, HostKey, Model, Policy, Provider } from '../catalog/kinds.ts';
import type { ModelResolver, Principal, Route, ShapeId, VendorAdapter } from '../hooks.ts';
import type { KeyHealth } from './key-health.ts';

export interface ResolverDeps {
  snapshot: () => CatalogSnapshot;
  adapters: ReadonlyMap<string, VendorAdapter>;
  /** Shapes that can be translated (an inbound codec exists for them). */
  translatable: (shape: ShapeId) => boolean;
  health: KeyHealth;
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
    const translated = !direct && deps.translatable(shape) && adapter.translationShape(shapes, shape) !== null;
    if (!direct && !translated) continue;
    out.push({ host, provider, adapter, shapes, upstreamModel: binding.upstreamModel, binding });
  }
  return out;
}

function keyAllowed(key: HostKey, model: Model, snapshot: CatalogSnapshot): boolean {
  if (!key.spec.policyId) return true;
  const policy = snapshot.policies.get(key.spec.policyId);
  return policy ? policyGrants(policy, model.metadata.id) : false;
}

export function createCatalogResolver(deps: ResolverDeps): ModelResolver {
  return (principal: Principal, name: string, options) => {
    const snapshot = deps.snapshot();
    const model = snapshot.modelBySlug(name) ?? snapshot.models.get(name);
    if (!model) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${name}\` does not exist.`);
    if (!policyGrants(principal.policy, model.metadata.id)) {
      throw new RelayError('RELAY_ERR_MODEL_NOT_GRANTED', `This relay key's policy does not grant the model \`${name}\`.`);
    }
    const bindings = weightedOrder(servableBindings(model, options.shape, snapshot, deps), (b) => b.binding.weight);
    if (bindings.length === 0) {
      throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${name}\` has no enabled binding that serves this API.`);
    }
    const routes: Route[] = [];
    const unavailable: HostKey[] = [];
    for (const b of bindings) {
      const base = { model, binding: b.binding, host: b.host, provider: b.provider, upstreamModel: b.upstreamModel, adapter: b.adapter, shapes: b.shapes };
      if (principal.passthroughCredential) {
        // Proxy mode: the caller's own credential goes only to upstreams of the inbound shape
        // (forwarded verbatim), never translated to another vendor's host.
        if (!b.shapes.includes(options.shape)) continue;
        if (!principal.explicitHost || principal.explicitHost === b.host.metadata.id || principal.explicitHost === b.host.metadata.slug) {
          routes.push({ ...base, hostKey: null });
        }
        continue;
      }
      const keys = snapshot.hostKeysOfHost(b.host.metadata.id).filter((k) => k.spec.weight > 0 && keyAllowed(k, model, snapshot));
      const healthy = keys.filter((k) => deps.health.isAvailable(k));
      unavailable.push(...keys.filter((k) => !healthy.includes(k)));
      for (const key of weightedOrder(healthy, (k) => k.spec.weight)) routes.push({ ...base, hostKey: key });
    }
    if (routes.length === 0) {
      if (principal.passthroughCredential) {
        throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', principal.explicitHost
          ? `The model \`${name}\` has no enabled binding on host \`${principal.explicitHost}\` that serves this API.`
          : `The model \`${name}\` has no enabled binding that serves this API in proxy mode.`);
      }
      const soonest = deps.health.soonestAvailable(unavailable);
      const retryAfter = soonest ? Math.max(1, Math.ceil((soonest - Date.now()) / 1000)) : null;
      throw new RelayError('RELAY_ERR_NO_HEALTHY_KEY',
        `No healthy host key is available for the model \`${name}\`${retryAfter ? `; try again in ${retryAfter}s` : ''}.`,
        retryAfter ? { headers: { 'retry-after': String(retryAfter) } } : {});
    }
    return routes;
  };
}

/** Models the principal can reach now: granted, with a servable binding and a usable key. */
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
      return snapshot.hostKeysOfHost(host.metadata.id).some((k) => k.spec.weight > 0 && keyAllowed(k, model, snapshot) && deps.health.isAvailable(k));
    });
    if (reachable) out.push(model);
  }
  return out.sort((a, b) => a.metadata.slug.localeCompare(b.metadata.slug));
}
