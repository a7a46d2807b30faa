// What passthrough of Claude on Vertex reads of Anthropic Messages bodies: usage (for the usage
// record), the stream's frame kinds (for failover before the first byte) and error bodies, which
// come in Anthropic's shape from the model and in Google's shape from Vertex itself.
import { ERROR_CODES, codeForUpstreamStatus, type RelayErrorBody, type StreamInspector } from '../../core/plugin-api.ts';
import { type Usage } from '../../core/plugin-api/canonical.ts';
import { codeForGeminiError, geminiErrorReason, parseGeminiError } from './codec/errors.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

/** Anthropic usage -> canonical: input counts cached and cache-written prompt tokens too. */
export function usageFromMessages(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return {
    input_tokens: count(u.input_tokens) + cacheRead + cacheWrite,
    output_tokens: count(u.output_tokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: 0,
  };
}

/**
 * message_start and ping open the stream; error is an in-stream error; message_delta has the final
 * usage, and its stop_reason "refusal" before any content block is a content-filter stop.
 */
export function messagesStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  let sawOutput = false;
  return {
    inspect(event, data) {
      if (event === 'ping') return 'opening';
      if (event === 'error') return 'error';
      if (event === 'message_start' || event === 'message_delta') {
        let refused = false;
        try {
          const json = JSON.parse(data) as { message?: { usage?: Record<string, unknown> }; usage?: Record<string, unknown>; delta?: { stop_reason?: unknown } };
          refused = event === 'message_delta' && json.delta?.stop_reason === 'refusal';
          const raw = event === 'message_start' ? json.message?.usage : { ...(json.usage ?? {}) };
          // message_delta's counts are cumulative; the input counts it leaves out are message_start's.
          const merged = usageFromMessages(event === 'message_delta' && usage ? { ...usageToRaw(usage), ...raw } : raw);
          if (merged) usage = merged;
        } catch {
          // not JSON: nothing to read
        }
        if (event === 'message_start') return 'opening';
        if (refused && !sawOutput) return 'content_filter';
      }
      sawOutput = true;
      return 'output';
    },
    usage: () => usage,
  };
}

function usageToRaw(u: Usage): Record<string, number> {
  return {
    input_tokens: u.input_tokens - u.cache_read_tokens - u.cache_write_tokens,
    cache_read_input_tokens: u.cache_read_tokens,
    cache_creation_input_tokens: u.cache_write_tokens,
    output_tokens: u.output_tokens,
  };
}

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
