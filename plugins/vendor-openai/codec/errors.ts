// An OpenAI(-compatible) upstream error -> canonical error. The upstream's message text is kept
// as it is; the code follows the HTTP status (see README.md, "Upstream errors").
import { ERROR_CODES, codeForUpstreamStatus, type RelayErrorBody } from '../../../core/plugin-api.ts';

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
