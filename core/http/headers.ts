// Which request headers go on to an upstream in passthrough.
import { HeaderNameVerdicts } from './header-name-verdicts.ts';

/** Headers that carry a credential: never forwarded as-is, never logged or captured. */
export const CREDENTIAL_HEADERS = new Set([
  'authorization', 'x-api-key', 'api-key', 'x-gw-api-key', 'cookie', 'set-cookie', 'proxy-authorization', 'x-goog-api-key',
]);

// Hop-by-hop headers (RFC 9110 7.6.1) and ones the HTTP client sets itself.
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'content-length', 'expect', 'accept-encoding',
]);

/**
 * The client's headers minus hop-by-hop, credentials and Relay's own `x-gw-*` headers.
 * accept-encoding is dropped so the upstream answers uncompressed and the usage tap can read it.
 */
export function filterForwardHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = forwardedName(name);
    if (lower === null) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** A name as forwarded (lower case), or null for one that is not. */
const forwardedNames = new HeaderNameVerdicts<string | null>();

function forwardedName(name: string): string | null {
  const known = forwardedNames.get(name);
  if (known !== undefined) return known;
  const lower = name.toLowerCase();
  const forwarded = NOT_FORWARDED.has(lower) || CREDENTIAL_HEADERS.has(lower) || lower.startsWith('x-gw-') ? null : lower;
  forwardedNames.remember(name, forwarded);
  return forwarded;
}

/** Removes credentials from a header map (for captured payloads and logs). */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (CREDENTIAL_HEADERS.has(lower) || lower.startsWith('x-gw-')) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
