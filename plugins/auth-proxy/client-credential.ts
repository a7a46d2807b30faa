// Proxy mode: the client's own upstream credential, taken from the header it came in and later
// sent upstream in that same header, untouched. It lives only on this request's principal.
import { RelayError, type InboundRequest } from '../../core/plugin-api.ts';

/** Headers a client's own vendor credential may arrive in (Claude Code: x-api-key or Authorization). */
export const CLIENT_CREDENTIAL_HEADERS = ['x-api-key', 'authorization'] as const;

function single(raw: string | string[] | undefined): string | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Every credential header the client sent, as sent. Throws 401 when there is none. */
export function clientCredential(req: InboundRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CLIENT_CREDENTIAL_HEADERS) {
    const value = single(req.headers[name]);
    if (value !== undefined) out[name] = value;
  }
  if (Object.keys(out).length === 0) {
    throw new RelayError('RELAY_ERR_UNAUTHENTICATED',
      'Proxy mode passes your own vendor credential upstream: send it in x-api-key or Authorization.');
  }
  return out;
}
