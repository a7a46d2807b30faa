// A Gemini error body ({"error": {"code", "message", "status"}}) -> the canonical error.
// The upstream's message is kept as it is; the Relay code follows Google's status name when
// there is one, else the HTTP status.
import { ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';
import type { UpstreamErrorReason } from '../../../core/plugin-api/canonical.ts';
import type { GeminiErrorDetail } from './wire.ts';

const BY_GOOGLE_STATUS: Record<string, ErrorCode> = {
  INVALID_ARGUMENT: 'RELAY_ERR_BAD_REQUEST',
  FAILED_PRECONDITION: 'RELAY_ERR_BAD_REQUEST',
  OUT_OF_RANGE: 'RELAY_ERR_BAD_REQUEST',
  // Relay's host key was refused: not the caller's to fix (the pipeline fails over on 401/403).
  UNAUTHENTICATED: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE',
  PERMISSION_DENIED: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE',
  NOT_FOUND: 'RELAY_ERR_NOT_FOUND',
  RESOURCE_EXHAUSTED: 'RELAY_ERR_UPSTREAM_RATE_LIMITED',
  UNAVAILABLE: 'RELAY_ERR_UPSTREAM_UNREACHABLE',
  DEADLINE_EXCEEDED: 'RELAY_ERR_UPSTREAM_TIMEOUT',
  INTERNAL: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE',
};

/** The shared mapping of the plugin API: Gemini's HTTP statuses mean what they mean elsewhere. */
export const codeForHttpStatus = codeForUpstreamStatus;

export function parseGeminiError(body: string): GeminiErrorDetail | null {
  try {
    const parsed = JSON.parse(body) as { error?: unknown } | Array<{ error?: unknown }>;
    // Some Google front ends wrap the error in an array.
    const error = Array.isArray(parsed) ? parsed[0]?.error : parsed?.error;
    return error !== null && typeof error === 'object' ? error as GeminiErrorDetail : null;
  } catch {
    return null;
  }
}

/** Gemini answers a wrong API key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID. */
export function isInvalidApiKey(error: GeminiErrorDetail | null): boolean {
  return error?.details?.some((d) => d?.reason === 'API_KEY_INVALID') === true;
}

export function codeForGeminiError(error: GeminiErrorDetail | null, httpStatus: number): ErrorCode {
  if (isInvalidApiKey(error)) return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  return (error?.status ? BY_GOOGLE_STATUS[error.status] : undefined) ?? codeForHttpStatus(httpStatus);
}

const MAX_MESSAGE = 2000;

export function decodeGeminiError(status: number, body: string): RelayErrorBody {
  const error = parseGeminiError(body);
  const code = codeForGeminiError(error, status);
  const def = ERROR_CODES[code];
  const upstreamMessage = typeof error?.message === 'string' && error.message !== '' ? error.message : undefined;
  const message = upstreamMessage ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  const reason = geminiErrorReason(status, upstreamMessage);
  return { code, type: def.type, status: def.status, message, ...(reason ? { reason } : {}) };
}

// Gemini: 400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens allowed (M)."
const CONTEXT_WORDS = /input token count .*exceeds the maximum|exceeds the maximum number of tokens/i;

/** Why the upstream refused the request, when another model may answer it (a 400 only). */
export function geminiErrorReason(status: number, message: string | undefined): UpstreamErrorReason | undefined {
  if (status !== 400 || message === undefined) return undefined;
  return CONTEXT_WORDS.test(message) ? 'context_window_exceeded' : undefined;
}
