// A streamed Chat Completion reports its token counts only when the client sets
// stream_options.include_usage. With the adapter option injectStreamUsage (on by default), Relay
// sets it for the upstream when the client did not (so the usage record, rate limits and cost are
// right), hides the extra usage-only chunk (choices: [] with usage) from the client, and takes out
// the "usage":null OpenAI then adds to every other chunk: the client gets what it asked for.
import type { InferenceCall, ShapeId, UsageRequest } from '../../core/plugin-api.ts';

export function chatUsageRequest(shape: ShapeId, request: Pick<InferenceCall, 'member'>): UsageRequest | null {
  if (shape !== 'openai.chat') return null;
  if (request.member('stream') !== true) return null;
  const options = request.member('stream_options');
  if (options && typeof options === 'object' && (options as Record<string, unknown>).include_usage === true) return null;
  return {
    set: { stream_options: { ...(options && typeof options === 'object' ? options : {}), include_usage: true } },
    clientFrame: (_event, data) => (isUsageOnlyChunk(data) ? null : withoutNullUsage(data)),
  };
}

function isUsageOnlyChunk(data: string): boolean {
  // Cheap test first: only the final chunk of the stream carries both.
  if (!data.includes('"usage"') || !data.includes('"choices"')) return false;
  try {
    const chunk = JSON.parse(data) as { choices?: unknown[]; usage?: unknown };
    return Array.isArray(chunk.choices) && chunk.choices.length === 0 && chunk.usage != null;
  } catch {
    return false;
  }
}

/** A chunk without the `"usage":null` member that asking for usage made the upstream add. */
function withoutNullUsage(data: string): string {
  if (!data.includes('"usage":null')) return data;
  return data.replace(/,"usage":null(?=[,}])/g, '').replace(/"usage":null,/g, '');
}
