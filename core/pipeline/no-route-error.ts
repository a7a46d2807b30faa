// The answer when a model has servable bindings but no host key can be tried. Configuration
// (no key, every key disabled or excluded by its host-tier policy) is permanent: a 404 naming the
// cause, as the spec answers a model with no usable binding. Health is transient: every key
// rate-limited is a 429, a circuit open or a key refused a 503, both with retry-after.
import { RelayError } from '../errors.ts';
import type { Host, HostKey } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Blocker, KeyHealth } from './key-health.ts';

export interface NoRouteContext {
  /** The model as the caller named it. */
  name: string;
  /** The hosts of the model's servable bindings. */
  hosts: readonly Host[];
  snapshot: CatalogSnapshot;
  health: KeyHealth;
  /** Whether the key's host-tier policy lets it serve this model. */
  allowed: (key: HostKey) => boolean;
}

export function noRouteError(ctx: NoRouteContext, now = Date.now()): RelayError {
  const usable: HostKey[] = [];
  const causes: string[] = [];
  const seen = new Set<string>();
  for (const host of ctx.hosts) {
    if (seen.has(host.metadata.id)) continue; // two bindings of the model on one host
    seen.add(host.metadata.id);
    const keys = ctx.snapshot.hostKeysOfHost(host.metadata.id);
    const hostUsable = keys.filter((k) => k.spec.enabled && k.spec.weight > 0 && ctx.allowed(k));
    if (hostUsable.length > 0) usable.push(...hostUsable);
    else causes.push(configurationCause(host, keys));
  }
  if (usable.length === 0) {
    return new RelayError('RELAY_ERR_NO_USABLE_HOST_KEY', `The model \`${ctx.name}\` has no usable host key: ${causes.join('; ')}.`);
  }
  let soonest: Blocker | null = null;
  for (const key of usable) {
    const blocker = ctx.health.blocker(key, now);
    if (blocker && (!soonest || blocker.until < soonest.until)) soonest = blocker;
  }
  const seconds = Math.max(1, Math.ceil(((soonest?.until ?? now + 1_000) - now) / 1000));
  const headers = { 'retry-after': String(seconds) };
  if (soonest?.state === 'cooling') {
    // Still the upstream's rate limit: a 429 the client knows how to wait on (issue 38).
    return new RelayError('RELAY_ERR_UPSTREAM_RATE_LIMITED', `Every host key for the model \`${ctx.name}\` is rate-limited by the upstream; try again in ${seconds}s.`, { headers });
  }
  const why = soonest?.state === 'open'
    ? (soonest.host ? 'its upstream host failed repeatedly (circuit open)' : 'its host keys failed repeatedly (circuit open)')
    : 'its host keys were refused by the upstream or cannot be used';
  return new RelayError('RELAY_ERR_NO_HEALTHY_KEY', `No healthy host key is available for the model \`${ctx.name}\`: ${why}; try again in ${seconds}s.`, { headers });
}

/** Why none of a host's keys may serve the model, in the operator's terms. */
function configurationCause(host: Host, keys: readonly HostKey[]): string {
  const name = `host \`${host.metadata.slug}\``;
  if (keys.length === 0) return `${name} has no host keys`;
  const disabled = keys.filter((k) => !k.spec.enabled).length;
  const weightless = keys.filter((k) => k.spec.enabled && k.spec.weight <= 0).length;
  const excluded = keys.length - disabled - weightless; // enabled, weighted, and refused by their policy
  if (disabled === keys.length) return `every host key of ${name} is disabled`;
  if (excluded === keys.length) return `the host-tier policy of every host key of ${name} excludes the model`;
  if (weightless === keys.length) return `every host key of ${name} has weight 0`;
  const parts = [
    disabled ? `${disabled} disabled` : '',
    weightless ? `${weightless} with weight 0` : '',
    excluded ? `${excluded} whose host-tier policy excludes the model` : '',
  ].filter(Boolean);
  return `the host keys of ${name} are ${parts.join(', ')}`;
}

/** A route whose circuit opened, or is being probed, since the routes were chosen, and nothing else is left. */
export function circuitRefusal(name: string, key: HostKey, health: KeyHealth, now = Date.now()): RelayError {
  const until = health.blocker(key, now)?.until ?? now + 1_000;
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  return new RelayError('RELAY_ERR_NO_HEALTHY_KEY', `No healthy host key is available for the model \`${name}\`: its circuit is open after repeated upstream failures, or being probed; try again in ${seconds}s.`, {
    headers: { 'retry-after': String(seconds) },
  });
}
