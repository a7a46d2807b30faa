// The upstream's own id for its answer (the usage log's upstream_request_id, a trace attribute):
// left out when it holds a secret the call sent, as an upstream that echoes the key as its id would.
import type { Principal, Route, UpstreamResponse } from '../hooks.ts';
import { upstreamRequestIdOf } from '../http/request-id.ts';
import { HostKeyMask, HostSecrets } from './credential-scrub.ts';
import { headerSecretsOf } from './sendable-host.ts';

/** `credential`: the host key sent (Relay's); in proxy mode the caller's own credential is checked instead. */
export function upstreamIdOf(route: Route, credential: string | null, principal: Principal, res: UpstreamResponse): string | null {
  const id = upstreamRequestIdOf(res.headers);
  if (id === null) return null;
  const own = route.hostKey === null ? principal.passthroughCredential : undefined;
  const sent = own ? [...(res.sentCredentials ?? []), ...Object.values(own).flatMap((value) => value.split(/\s+/))] : res.sentCredentials;
  const mask = HostKeyMask.of(route.hostKey === null ? null : credential, HostSecrets.withSent(headerSecretsOf(route.host), sent));
  return mask === null || mask.text(id) === id ? id : null;
}
