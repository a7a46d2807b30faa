// An error reported inside an OpenAI stream (a chunk with `error`, a Responses `error` or
// `response.failed` event) -> the canonical stream error event.
import { ERROR_CODES, type ErrorCode } from '../../../core/plugin-api.ts';
import { type StreamEvent } from '../../../core/plugin-api/canonical.ts';

export function upstreamStreamError(raw: unknown): Extract<StreamEvent, { type: 'error' }> {
  const error = (raw !== null && typeof raw === 'object' ? raw : {}) as { message?: unknown; code?: unknown; type?: unknown };
  const hint = `${String(error.code ?? '')} ${String(error.type ?? '')}`;
  const code: ErrorCode = /rate_limit|insufficient_quota|tokens|requests/.test(hint) ? 'RELAY_ERR_UPSTREAM_RATE_LIMITED' : 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  const def = ERROR_CODES[code];
  return {
    type: 'error',
    error: { type: def.type, code, status: def.status, message: typeof error.message === 'string' ? error.message : 'the upstream reported an error' },
  };
}
