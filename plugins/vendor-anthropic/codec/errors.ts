// An Anthropic upstream error ({"type":"error","error":{"type","message"}}) -> canonical error.
// The message text is kept as it is; the code follows the HTTP status (see README.md).
import { ERROR_CODES, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';

/**
 * Status -> Relay code. 401/403 mean Relay's host key was refused: the caller cannot fix that,
 * so it is an upstream failure (502), and the pipeline marks the key invalid and fails over.
 * 529 is Anthropic's "overloaded".
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

export function anthropicErrorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown }; message?: unknown };
    if (typeof parsed?.error?.message === 'string') return parsed.error.message;
    if (typeof parsed?.message === 'string') return parsed.message;
  } catch {
    // not JSON: the text itself is the message
  }
  return undefined;
}

export function decodeAnthropicError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const message = anthropicErrorMessage(body)
    ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  return { code, type: def.type, status: def.status, message };
}

/** An in-stream `error` event's error type -> the Relay code. */
export function codeForStreamErrorType(type: unknown): ErrorCode {
  if (type === 'rate_limit_error') return 'RELAY_ERR_RATE_LIMITED';
  if (type === 'overloaded_error') return 'RELAY_ERR_UPSTREAM_UNREACHABLE';
  if (type === 'invalid_request_error') return 'RELAY_ERR_BAD_REQUEST';
  return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
}
