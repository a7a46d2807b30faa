// Relay errors in OpenAI's error body: {"error":{"message","type","param","code"}}.
// `code` is Relay's RELAY_ERR_* code (documented, stable); `type` uses OpenAI's vocabulary.
import type { ErrorType, RelayErrorBody, RenderedError } from '../../../core/plugin-api.ts';

const OPENAI_ERROR_TYPES: Record<ErrorType, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  quota: 'insufficient_quota',
  upstream: 'server_error',
  unavailable: 'server_error',
  timeout: 'timeout_error',
  server: 'server_error',
};

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Relay's error type (or a canonical stream error's type) in OpenAI's vocabulary. */
export function openaiErrorType(type: string): string {
  return OPENAI_ERROR_TYPES[type as ErrorType] ?? 'server_error';
}

export function openaiErrorBody(error: Pick<RelayErrorBody, 'message' | 'field'> & { type: string; code: string }): OpenAIErrorBody {
  return { error: { message: error.message, type: openaiErrorType(error.type), param: error.field ?? null, code: error.code } };
}

export function renderOpenAIError(error: RelayErrorBody): RenderedError {
  // The code the OpenAI SDKs and agents test for when a previous_response_id is unknown.
  if (error.code === 'RELAY_ERR_RESPONSE_NOT_FOUND' && error.field === 'previous_response_id') {
    return { status: error.status, body: openaiErrorBody({ ...error, code: 'previous_response_not_found' }) };
  }
  return { status: error.status, body: openaiErrorBody(error) };
}
