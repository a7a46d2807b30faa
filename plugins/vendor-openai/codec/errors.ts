// An OpenAI(-compatible) upstream error -> canonical error. The upstream's message text is kept
// as it is; the code follows the HTTP status (see README.md, "Upstream errors").
import { ERROR_CODES, codeForUpstreamStatus, type RelayErrorBody } from '../../../core/plugin-api.ts';
import type { UpstreamErrorReason } from '../../../core/plugin-api/canonical.ts';

const MAX_MESSAGE = 2000;

function messageOf(body: string): { message?: string; param?: string; code?: string } {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const error = parsed?.error;
    if (error !== null && typeof error === 'object') {
      const e = error as { message?: unknown; param?: unknown; code?: unknown };
      return {
        ...(typeof e.message === 'string' ? { message: e.message } : {}),
        ...(typeof e.param === 'string' ? { param: e.param } : {}),
        ...(typeof e.code === 'string' ? { code: e.code } : {}),
      };
    }
    if (typeof error === 'string') return { message: error };
    if (typeof parsed?.message === 'string') return { message: parsed.message };
  } catch {
    // not JSON: the text itself is the message
  }
  return {};
}

// OpenAI's codes for a prompt over the window and a refused prompt (Azure's content filter says
// content_filter; compatible servers such as vLLM only say it in words).
const CONTEXT_CODES = new Set(['context_length_exceeded', 'string_above_max_length']);
const FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'ResponsibleAIPolicyViolation']);
const CONTEXT_WORDS = /maximum context length|context window|too many tokens|prompt is too long/i;

/** Why the upstream refused the request, when another model may answer it (a 4xx only). */
export function openAIErrorReason(status: number, code: string | undefined, message: string | undefined): UpstreamErrorReason | undefined {
  if (status < 400 || status >= 500 || status === 429) return undefined;
  if (code !== undefined && CONTEXT_CODES.has(code)) return 'context_window_exceeded';
  if (code !== undefined && FILTER_CODES.has(code)) return 'content_filter';
  if (message !== undefined && CONTEXT_WORDS.test(message)) return 'context_window_exceeded';
  return undefined;
}

export function decodeOpenAIError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const { message, param, code: upstreamCode } = messageOf(body);
  const text = message ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  const reason = openAIErrorReason(status, upstreamCode, message);
  return { code, type: def.type, status: def.status, message: text, ...(param === undefined ? {} : { field: param }), ...(reason ? { reason } : {}) };
}
