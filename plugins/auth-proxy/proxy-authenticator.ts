// The proxy-mode authenticator. With `X-GW-API-Key` it claims the request:
//   - the relay key in X-GW-API-Key authenticates the caller (policy, logs, rate limits);
//   - with X-GW-Proxy-Mode on, the client's own x-api-key / Authorization becomes the upstream
//     credential (Principal.passthroughCredential) instead of a host key, and X-GW-Host may name
//     the upstream host (id or slug);
//   - with proxy mode off, the request is served with the operator's host keys as usual.
// Without X-GW-API-Key it returns null and the next authenticator (auth-bearer) is asked, unless
// proxy mode was asked for: then it is a 401, so that the client's vendor key in x-api-key is
// never mistaken for a relay key.
import { RelayError, type Authenticator, type InboundRequest, type Principal } from '../../core/plugin-api.ts';
import { clientCredential } from './client-credential.ts';
import { proxyAttribution } from './client-attribution.ts';
import { PROXY_MODE_HEADER, proxyModeRequested } from './proxy-mode-header.ts';

export const RELAY_KEY_HEADER = 'x-gw-api-key';
export const HOST_HEADER = 'x-gw-host';

export interface ProxyAuthOptions {
  /** Proxy mode accepted at all. */
  enabled: boolean;
  /** Path prefixes where proxy mode is accepted (e.g. /vendor-b); empty: everywhere. */
  prefixes: readonly string[];
  principalForRelayKey(plaintext: string): Principal;
}

function single(raw: string | string[] | undefined): string | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function pathAllowed(url: string, prefixes: readonly string[]): boolean {
  if (prefixes.length === 0) return true;
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  return prefixes.some((p) => path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`));
}

export function createProxyAuthenticator(options: ProxyAuthOptions): Authenticator {
  return (req: InboundRequest) => {
    const proxyMode = proxyModeRequested(req.headers[PROXY_MODE_HEADER]);
    const relayKey = single(req.headers[RELAY_KEY_HEADER]);
    if (relayKey === undefined) {
      if (!proxyMode) return null;
      throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'Proxy mode needs the relay key in the X-GW-API-Key header.');
    }
    const principal = options.principalForRelayKey(relayKey);
    if (!proxyMode) return principal;
    if (!options.enabled) throw new RelayError('RELAY_ERR_FORBIDDEN', 'Proxy mode is not enabled on this Relay.');
    if (!pathAllowed(req.url, options.prefixes)) throw new RelayError('RELAY_ERR_FORBIDDEN', 'Proxy mode is not enabled for this API.');
    const explicitHost = single(req.headers[HOST_HEADER]);
    const attribution = proxyAttribution(req, explicitHost);
    const proxied: Principal = Object.assign({}, principal);
    proxied.extras = Object.assign({}, principal.extras, attribution.extras);
    proxied.passthroughCredential = clientCredential(req);
    if (attribution.client !== undefined) proxied.client = attribution.client;
    if (explicitHost !== undefined) proxied.explicitHost = explicitHost;
    return proxied;
  };
}
