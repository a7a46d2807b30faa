// Canonical response -> OpenAI Chat Completions response (`chat.completion`).
import type { CanonicalResponse, StopReason, Usage } from '../../../core/plugin-api/canonical.ts';
import type { EncodeContext } from '../../../core/plugin-api.ts';
import { clientToolCall, customToolNames } from './custom-tool-calls.ts';

/** What the Chat encoders drop from a canonical response, and why. */
export const CHAT_RESPONSE_DROPPED = {
  'reasoning parts': 'Chat Completions has no reasoning output (reasoning_tokens still count in usage)',
  'image, document and tool_result parts in output': 'an assistant message carries text, refusal and tool calls only; named (`image`, ...) in x-relay-dropped',
  'stop_sequence (which one matched)': 'finish_reason "stop" covers both a natural end and a stop sequence',
  'cache_write_tokens': 'usage has cached (read) tokens only',
  'web_search_call parts': 'Chat has no search item: the answer\'s text and its url_citation annotations (non-streamed answers) carry the search',
  'pause_turn (a paused server-tool loop)': 'finish_reason "stop"; the text so far is the answer',
} as const;

/** Text parts of one message are separated by a blank line (also in streams). */
export const TEXT_PART_SEPARATOR = '\n\n';

const FINISH_REASONS: Record<StopReason, 'stop' | 'length' | 'tool_calls' | 'content_filter'> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  refusal: 'stop',
  error: 'stop',
  pause_turn: 'stop',
};

export function finishReason(reason: StopReason): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  return FINISH_REASONS[reason] ?? 'stop';
}

export function chatUsage(usage: Usage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cache_read_tokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
  };
}

export function chatCompletionId(id: string): string {
  return id.startsWith('chatcmpl') ? id : `chatcmpl-${id}`;
}

export function encodeChatResponse(response: CanonicalResponse, ctx: EncodeContext): unknown {
  const custom = customToolNames(ctx.request);
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: unknown[] = [];
  const annotations: unknown[] = [];
  let offset = 0;
  for (const part of response.content) {
    if (part.type === 'text') {
      // Citations index the joined content: each text part starts after the ones before and their separators.
      if (texts.length > 0) offset += TEXT_PART_SEPARATOR.length;
      for (const c of part.citations ?? []) {
        annotations.push({ type: 'url_citation', url_citation: { url: c.url, title: c.title ?? '', start_index: offset + (c.start_index ?? 0), end_index: offset + (c.end_index ?? part.text.length) } });
      }
      texts.push(part.text);
      offset += part.text.length;
    }
    else if (part.type === 'refusal') refusals.push(part.text);
    else if (part.type === 'tool_call') {
      const call = clientToolCall(part, custom);
      toolCalls.push(call.kind === 'custom'
        ? { id: part.id, type: 'custom', custom: { name: part.name, input: call.input } }
        : { id: part.id, type: 'function', function: { name: part.name, arguments: call.input } });
    // Reasoning is dropped by rule; a search is carried by the text and its annotations.
    } else if (part.type !== 'reasoning' && part.type !== 'web_search_call') ctx.dropped?.push(part.type);
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join(TEXT_PART_SEPARATOR) : null,
    refusal: refusals.length > 0 ? refusals.join(TEXT_PART_SEPARATOR) : null,
    annotations,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: chatCompletionId(response.id),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(response.stop_reason) }],
    usage: chatUsage(response.usage),
  };
}
