// Canonical response -> Anthropic Messages response (`type: "message"`).
import { toolInputObject, usageToMessages, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import type { EncodeContext } from '../../../core/plugin-api.ts';
import { isRedactedThinking, sealSignature } from './reasoning-envelope.ts';
import { anthropicCitation, webSearchBlocks } from './web-search-blocks.ts';

/** What the Messages encoders drop from a canonical response, and why. */
export const MESSAGES_RESPONSE_DROPPED = {
  'refusal parts': 'rendered as text blocks (Anthropic has no refusal block; stop_reason says "refusal")',
  'image, document and tool_result parts in output': 'an assistant message carries text, thinking and tool_use; named (`image`, ...) in x-relay-dropped',
  'custom tool calls': 'rendered as tool_use with input {"input": "<raw text>"}',
  'encrypted_content of another vendor\'s search results': 'OpenAI\'s web_search_call has none: results carry url, title and page_age, encrypted_content (and a citation\'s encrypted_index) are empty',
} as const;

const STOP_REASONS: Record<StopReason, string> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  content_filter: 'refusal',
  refusal: 'refusal',
  error: 'end_turn',
  pause_turn: 'pause_turn',
};

export function anthropicStopReason(reason: StopReason): string {
  return STOP_REASONS[reason] ?? 'end_turn';
}

export function messageId(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** A tool call's arguments as the tool_use `input` object. */

function blocks(part: ContentPart): Record<string, unknown>[] {
  if (part.type === 'web_search_call') return webSearchBlocks(part);
  const one = block(part);
  return one === null ? [] : [one];
}

function block(part: ContentPart): Record<string, unknown> | null {
  switch (part.type) {
    case 'text':
      return part.citations && part.citations.length > 0
        ? { type: 'text', text: part.text, citations: part.citations.map((c) => anthropicCitation(c, part.text)) }
        : { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.text };
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: toolInputObject(part.arguments, part.tool_kind) };
    case 'reasoning':
      if (isRedactedThinking(part)) return { type: 'redacted_thinking', data: part.encrypted };
      return { type: 'thinking', thinking: part.text ?? '', signature: sealSignature(part) ?? '' };
    default:
      return null;
  }
}

export function encodeMessagesResponse(response: CanonicalResponse, ctx: EncodeContext): unknown {
  const content: Record<string, unknown>[] = [];
  for (const part of response.content) {
    const encoded = blocks(part);
    if (encoded.length > 0) content.push(...encoded);
    else ctx.dropped?.push(part.type);
  }
  return {
    id: messageId(response.id),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: anthropicStopReason(response.stop_reason),
    stop_sequence: response.stop_sequence ?? null,
    usage: usageToMessages(response.usage),
  };
}
