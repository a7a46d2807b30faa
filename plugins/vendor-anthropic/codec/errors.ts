// An Anthropic upstream error ({"type":"error","error":{"type","message"}}) -> canonical error.
// The message text is kept as it is; the code follows the HTTP status (see README.md).
import { ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';
import type { UpstreamErrorReason } from '../../../core/plugin-api/canonical.ts';

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

// Anthropic answers a prompt over the window with invalid_request_error "prompt is too long:
// N tokens > M maximum" (and, for input plus max_tokens, "... exceed context limit").
const CONTEXT_WORDS = /prompt is too long|exceed(?:s|ed)? (?:the )?context (?:limit|window)|input length and `max_tokens` exceed/i;

/** Why the upstream refused the request, when another model may answer it (a 4xx only). */
export function anthropicErrorReason(status: number, message: string | undefined): UpstreamErrorReason | undefined {
  if (status !== 400 && status !== 413 || message === undefined) return undefined;
  return CONTEXT_WORDS.test(message) ? 'context_window_exceeded' : undefined;
}

export function decodeAnthropicError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const upstreamMessage = anthropicErrorMessage(body);
  const message = upstreamMessage ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  const reason = anthropicErrorReason(status, upstreamMessage);
  return { code, type: def.type, status: def.status, message, ...(reason ? { reason } : {}) };
}

/** An in-stream `error` event's error type -> the Relay code. */
export function codeForStreamErrorType(type: unknown): ErrorCode {
  if (type === 'rate_limit_error') return 'RELAY_ERR_UPSTREAM_RATE_LIMITED';
  if (type === 'overloaded_error') return 'RELAY_ERR_UPSTREAM_UNREACHABLE';
  if (type === 'invalid_request_error') return 'RELAY_ERR_BAD_REQUEST';
  return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
}
