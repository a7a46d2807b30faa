// A host as Relay sends to it: its header values opened where the catalog holds them sealed
// (core/catalog/host-header-sealing.ts). Opened once per host version (a new snapshot reuses the
// entities that did not change) when the resolver builds its routes for a snapshot, never per
// request. The opened copy lives only in routes; the snapshot, its local file and the API keep
// the sealed form. Its values are also what credential-scrub.ts masks out of the host's answers.
import { isSealedForm, type Host } from '../catalog/kinds.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { ModelResolver, Route } from '../hooks.ts';
import { HostSecrets } from './credential-scrub.ts';

const secretsByHost = new WeakMap<Host, HostSecrets>();

/**
 * Headers whose values are not secrets and are left in answers: masking an app's URL or an
 * organization id would corrupt answers that name them. Any other header's value is masked.
 */
const PUBLIC_HEADERS = new Set([
  'http-referer', 'referer', 'x-title', 'user-agent', 'accept', 'content-type',
  'anthropic-version', 'anthropic-beta', 'openai-organization', 'openai-project', 'openai-beta',
]);

/** The header values of a host as sent (SendableHosts.of), to mask out of its answers; null when it has none worth masking. */
export function headerSecretsOf(host: Host): HostSecrets | null {
  return secretsByHost.get(host) ?? null;
}

export class SendableHosts {
  private readonly opened = new WeakMap<Host, Host>();

  constructor(private readonly sealer: Sealer, private readonly warn: (obj: object, msg: string) => void) {}

  /** `host` with its header values opened; `host` itself when none is sealed. */
  of(host: Host): Host {
    let sendable = this.opened.get(host);
    if (sendable === undefined) {
      sendable = this.open(host);
      this.opened.set(host, sendable);
    }
    return sendable;
  }

  /** A plugin's resolver hands out the snapshot's hosts: the same opened copies. */
  resolver(resolve: () => ModelResolver): ModelResolver {
    return (principal, model, options) => resolve()(principal, model, options).map((route): Route => {
      const host = this.of(route.host);
      return host === route.host ? route : { ...route, host };
    });
  }

  private open(host: Host): Host {
    const stored = host.spec.headers;
    if (stored === undefined || Object.keys(stored).length === 0) return host;
    const headers: Record<string, string> = {};
    const unopened: string[] = [];
    let sealed = false;
    for (const [name, value] of Object.entries(stored)) {
      if (!isSealedForm(value)) {
        headers[name] = value;
        continue;
      }
      sealed = true;
      try {
        headers[name] = this.sealer.open(value);
      } catch {
        unopened.push(name);
      }
    }
    // Left out rather than sent sealed: the upstream would take the ciphertext for the credential.
    if (unopened.length > 0) {
      this.warn({ host: host.metadata.slug, headers: unopened }, 'host header values sealed under a master key this instance lacks are not sent; set them again');
    }
    const sendable = sealed ? { ...host, spec: { ...host.spec, headers } } : host;
    const secrets = HostSecrets.of(Object.entries(headers).filter(([name]) => !PUBLIC_HEADERS.has(name.toLowerCase())).map(([, value]) => value));
    if (secrets) secretsByHost.set(sendable, secrets);
    return sendable;
  }
}
