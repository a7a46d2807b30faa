// Bedrock's errors in Anthropic's words, for Messages clients reaching Claude through
// InvokeModel: they read `{"type":"error","error":{"type","message"}}` (Claude Code retries on
// rate_limit_error and overloaded_error), not Bedrock's `{"message"}`.
import { exceptionName, statusForException } from './codec/errors.ts';

/** A Bedrock exception name (any spelling) -> Anthropic's error type. */
export function anthropicErrorType(name: string | undefined): string {
  const status = statusForException(exceptionName(name), 500);
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 502) return 'overloaded_error';
  if (status === 400) return 'invalid_request_error';
  if (status === 404) return 'not_found_error';
  if (status === 403) return 'permission_error';
  if (status === 408) return 'timeout_error';
  return 'api_error';
}

/** A Bedrock error body -> Anthropic's error body, the message kept. */
export function anthropicErrorBody(name: string | undefined, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(name), message } });
}
