// Which upstream answers fail over (before the first byte) and what they do to key health.
import type { FailureKind } from './key-health.ts';

export interface StatusVerdict {
  /** Another candidate may be tried. */
  retryable: boolean;
  /** What it says about the host key, if anything. */
  failure: FailureKind | null;
}

export function classifyStatus(status: number): StatusVerdict {
  if (status === 429) return { retryable: true, failure: 'rate_limit' };
  if (status === 401 || status === 403) return { retryable: true, failure: 'auth' };
  if (status === 408) return { retryable: true, failure: 'timeout' };
  if (status >= 500) return { retryable: true, failure: 'server' };
  return { retryable: false, failure: null };
}

/** Network errors from undici before the first byte reached the client. */
export function classifyNetworkError(err: unknown): { failure: FailureKind; message: string; badResponse: boolean } {
  const e = err as { code?: string; name?: string; message?: string } | undefined;
  // Not every library's code is a string (gaxios puts an HTTP status there).
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'RELAY_UPSTREAM_HEADERS_TIMEOUT') {
    return { failure: 'timeout', message: 'the upstream did not answer in time', badResponse: false };
  }
  // A misframed answer (undici's HTTP parser, a length that does not add up, a status that is not HTTP).
  if (code === 'RELAY_UPSTREAM_BAD_RESPONSE' || code.startsWith('HPE_') || e?.name === 'HTTPParserError' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return { failure: 'server', message: `the upstream's answer is not valid HTTP (${e?.message ?? code})`, badResponse: true };
  }
  // A head past undici's maxHeaderSize (many headers, or one huge one): answered, but not readable.
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return { failure: 'server', message: "the upstream's answer has headers larger than Relay reads", badResponse: true };
  // An adapter that could not read the answer's framing (Bedrock's event stream); a redirect (upstream-client.ts).
  if (code === 'RELAY_ERR_UPSTREAM_BAD_RESPONSE' || code === 'RELAY_UPSTREAM_REDIRECT') return { failure: 'server', message: e?.message ?? code, badResponse: true };
  return { failure: 'connect', message: `the upstream could not be reached (${code || e?.message || 'error'})`, badResponse: false };
}

/** retry-after as milliseconds (seconds or an HTTP date), or null. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>): number | null {
  const raw = headers['retry-after'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 3_600_000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, Math.min(date - Date.now(), 3_600_000)) : null;
}

export function isEventStream(headers: Record<string, string | string[] | undefined>): boolean {
  const ct = headers['content-type'];
  return typeof ct === 'string' && ct.includes('text/event-stream');
}
