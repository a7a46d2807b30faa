// An Anthropic upstream error ({"type":"error","error":{"type","message"}}) -> canonical error.
// The message text is kept as it is; the code follows the HTTP status (see README.md).
import { ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';

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
