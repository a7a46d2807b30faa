// An OpenAI(-compatible) upstream error -> canonical error. The upstream's message text is kept
// as it is; the code follows the HTTP status (see README.md, "Upstream errors").
import { ERROR_CODES, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';

/**
 * Status -> Relay code. 401/403 mean Relay's host key was refused: the caller cannot fix that,
 * so it is an upstream failure (502), and the pipeline marks the key invalid and fails over.
 */
export function codeForUpstreamStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  if (status === 404) return 'RELAY_ERR_NOT_FOUND';
  if (status === 408) return 'RELAY_ERR_UPSTREAM_TIMEOUT';
  if (status === 413) return 'RELAY_ERR_BODY_TOO_LARGE';
  if (status === 429) return 'RELAY_ERR_RATE_LIMITED';
  if (status === 502 || status === 503 || status === 529) return 'RELAY_ERR_UPSTREAM_UNREACHABLE';
  if (status === 504) return 'RELAY_ERR_UPSTREAM_TIMEOUT';
  if (status >= 500) return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  if (status >= 400) return 'RELAY_ERR_BAD_REQUEST';
  return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
}

const MAX_MESSAGE = 2000;

function messageOf(body: string): { message?: string; param?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const error = parsed?.error;
    if (error !== null && typeof error === 'object') {
      const e = error as { message?: unknown; param?: unknown };
      return {
        ...(typeof e.message === 'string' ? { message: e.message } : {}),
        ...(typeof e.param === 'string' ? { param: e.param } : {}),
      };
    }
    if (typeof error === 'string') return { message: error };
    if (typeof parsed?.message === 'string') return { message: parsed.message };
  } catch {
    // not JSON: the text itself is the message
  }
  return {};
}

export function decodeOpenAIError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const { message, param } = messageOf(body);
  const text = message ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  return { code, type: def.type, status: def.status, message: text, ...(param === undefined ? {} : { field: param }) };
}
