// Relay errors in Anthropic's error body: {"type":"error","error":{"type","message"}}.
import type { ErrorType, RelayErrorBody, RenderedError } from '../../../core/plugin-api.ts';

const ANTHROPIC_ERROR_TYPES: Record<ErrorType, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  payload_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  quota: 'rate_limit_error',
  upstream: 'api_error',
  unavailable: 'overloaded_error',
  timeout: 'timeout_error',
  server: 'api_error',
};

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** Relay's error type (or a canonical stream error's type) in Anthropic's vocabulary. */
export function anthropicErrorType(type: string): string {
  return ANTHROPIC_ERROR_TYPES[type as ErrorType] ?? 'api_error';
}

export function anthropicErrorBody(error: { type: string; message: string }): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(error.type), message: error.message } };
}

export function renderAnthropicError(error: RelayErrorBody): RenderedError {
  return { status: error.status, body: anthropicErrorBody(error) };
}
