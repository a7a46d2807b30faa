// Error bodies of Claude on Vertex, which come in Anthropic's shape from the model and in Google's
// shape from Vertex itself. Usage and the stream's frame kinds are the Messages shape's own
// (usageFromMessages, messagesStreamInspector in relay-gateway/canonical).
import { ERROR_CODES, codeForUpstreamStatus, type RelayErrorBody } from '../../core/plugin-api.ts';
import { codeForGeminiError, geminiErrorReason, parseGeminiError } from './codec/errors.ts';

const MAX_MESSAGE = 2000;
// Claude on Vertex words a prompt over the window as Anthropic does.
const CLAUDE_CONTEXT_WORDS = /prompt is too long|exceed(?:s|ed)? (?:the )?context (?:limit|window)/i;

/** {"type":"error","error":{"type","message"}} from Claude, {"error":{"code","message","status"}} from Vertex. */
export function decodeMessagesError(status: number, body: string): RelayErrorBody {
  let message: string | undefined;
  try {
    const json = JSON.parse(body) as { type?: unknown; error?: { message?: unknown } };
    if (json?.type === 'error' && typeof json.error?.message === 'string') message = json.error.message;
  } catch {
    // not JSON
  }
  const google = message === undefined ? parseGeminiError(body) : null;
  const code = google ? codeForGeminiError(google, status) : codeForUpstreamStatus(status);
  message ??= typeof google?.message === 'string' && google.message !== ''
    ? google.message
    : body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE);
  const def = ERROR_CODES[code];
  const reason = status === 400 && CLAUDE_CONTEXT_WORDS.test(message) ? 'context_window_exceeded' as const : geminiErrorReason(status, message);
  return { code, type: def.type, status: def.status, message, ...(reason ? { reason } : {}) };
}
