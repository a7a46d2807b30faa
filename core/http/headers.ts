// Which request headers go on to an upstream in passthrough.

/** Headers that carry a credential: never forwarded as-is, never logged or captured. */
export const CREDENTIAL_HEADERS = new Set([
  'authorization', 'x-api-key', 'api-key', 'x-gw-api-key', 'cookie', 'set-cookie', 'proxy-authorization', 'x-goog-api-key',
]);

// Hop-by-hop headers (RFC 9110 7.6.1), ones the HTTP client sets itself, and content-encoding: the
// body Relay sends is the decoded one (body-guard.ts).
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'content-length', 'expect', 'accept-encoding', 'content-encoding',
]);

/**
 * Headers that choose which account a credential acts for, and so who is billed: the caller's own
 * go with the caller's own credential (proxy mode), never with a host key, whose account the
 * operator chose (a host's `headers` may set them).
 */
const ACCOUNT_HEADERS = ['openai-organization', 'openai-project', 'x-goog-user-project'];

/** `headers` (forwarded, lower-cased) without the account-choosing ones; the same object when it has none. */
export function withoutAccountHeaders(headers: Record<string, string>): Record<string, string> {
  if (!ACCOUNT_HEADERS.some((name) => name in headers)) return headers;
  const out = { ...headers };
  for (const name of ACCOUNT_HEADERS) delete out[name];
  return out;
}

/** W3C Trace Context and Baggage: a request tracer's to send upstream when one follows the request, never the client's. */
export const TRACE_CONTEXT_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;

/** Header names a `Connection` header lists: hop-by-hop for this connection only (RFC 9110 7.6.1). */
export function connectionListed(headers: Record<string, string | string[] | undefined>): Set<string> | null {
  const value = headers.connection ?? headers.Connection;
  // The usual values name no header (keep-alive is hop-by-hop anyway): nothing to split.
  if (value === undefined || value === 'keep-alive' || value === 'close') return null;
  const names = (Array.isArray(value) ? value.join(',') : value).split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
  return names.length > 0 ? new Set(names) : null;
}

/**
 * The client's headers minus hop-by-hop ones (those a `Connection` header names included),
 * credentials and Relay's own `x-gw-*` headers. The client's accept-encoding is dropped: Relay asks
 * for identity itself (passthrough.ts), so that the usage tap and the host-key scrubber can read the answer.
 */
export function filterForwardHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const listed = connectionListed(headers);
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (NOT_FORWARDED.has(lower) || CREDENTIAL_HEADERS.has(lower) || lower.startsWith('x-gw-') || listed?.has(lower)) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
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
