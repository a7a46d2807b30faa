// 'anthropic.messages' on Bedrock (InvokeModel): only passed through, never translated to
// (Converse serves translation), so this codec reads errors, usage and stream frames only.
// The adapter re-emits Bedrock's stream as Anthropic's own SSE and its errors in Anthropic's
// error body, so these read Anthropic's shapes.
import { RelayError, type StreamInspector } from '../../../core/plugin-api.ts';
import type { ShapeCodec, Usage } from '../../../core/plugin-api/canonical.ts';
import { decodeBedrockError } from './errors.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

/**
 * Anthropic usage -> canonical (input_tokens there leaves out cache reads and writes); 1-hour cache
 * writes and server-side web searches are priced apart, so they are read too.
 */
export function usageFromAnthropic(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown> & { cache_creation?: { ephemeral_1h_input_tokens?: unknown } | null; server_tool_use?: { web_search_requests?: unknown } | null };
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  const write1h = Math.min(count(u.cache_creation?.ephemeral_1h_input_tokens), cacheWrite);
  const searches = count(u.server_tool_use?.web_search_requests);
  return {
    input_tokens: count(u.input_tokens) + cacheRead + cacheWrite, output_tokens: count(u.output_tokens), cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite,
    ...(write1h > 0 ? { cache_write_1h_tokens: write1h } : {}),
    reasoning_tokens: 0,
    ...(searches > 0 ? { web_search_requests: searches } : {}),
  };
}

/**
 * message_start and ping are `opening`, error is `error`, a message_delta with stop_reason "refusal"
 * before any content block `content_filter`, the rest output; message_delta's counts overwrite message_start's.
 */
function messagesInspector(): StreamInspector {
  const fields: Record<string, unknown> = {};
  let sawOutput = false;
  const merge = (raw: unknown) => {
    if (raw && typeof raw === 'object') for (const [k, v] of Object.entries(raw)) if (v !== null && v !== undefined) fields[k] = v;
  };
  return {
    inspect(event, data) {
      if (event === 'ping' || event === 'message_start') {
        if (event === 'message_start') {
          try { merge((JSON.parse(data) as { message?: { usage?: unknown } }).message?.usage); } catch { /* no usage */ }
        }
        return 'opening';
      }
      if (event === 'error') return 'error';
      if (event === 'message_delta') {
        let refused = false;
        try {
          const delta = JSON.parse(data) as { usage?: unknown; delta?: { stop_reason?: unknown } };
          merge(delta.usage);
          refused = delta.delta?.stop_reason === 'refusal';
        } catch { /* no usage */ }
        if (refused && !sawOutput) return 'content_filter';
      }
      sawOutput = true;
      return 'output';
    },
    usage: () => (Object.keys(fields).length > 0 ? usageFromAnthropic(fields) : null),
  };
}

const notTranslated = (): never => {
  throw new RelayError('RELAY_ERR_INTERNAL', 'the Bedrock adapter translates through bedrock.converse, not anthropic.messages');
};

export const messagesPassthrough: ShapeCodec = {
  encodeRequest: notTranslated,
  decodeResponse: notTranslated,
  streamDecoder: notTranslated,
  decodeError: decodeBedrockError,
  usageFromBody: (body) => usageFromAnthropic((body as { usage?: unknown } | null)?.usage),
  streamInspector: messagesInspector,
};
