// Gemini finishReason (and promptFeedback.blockReason) -> canonical stop reason.
// Gemini says STOP after function calls too: with a tool call in the answer it is `tool_use`.
// Gemini does not say which stop sequence matched, so stop_sequence is never set.
import type { StopReason } from 'relay-gateway/canonical';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'LANGUAGE', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);
const FAILED_TOOL_CALL = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

export function stopReasonFromGemini(finishReason: unknown, hasToolCall: boolean, blockReason?: unknown): StopReason {
  if (typeof blockReason === 'string' && blockReason !== '' && blockReason !== 'BLOCK_REASON_UNSPECIFIED') return 'content_filter';
  if (finishReason === 'MAX_TOKENS') return 'max_tokens';
  if (typeof finishReason === 'string' && FILTERED.has(finishReason)) return 'content_filter';
  if (typeof finishReason === 'string' && FAILED_TOOL_CALL.has(finishReason)) return 'error';
  return hasToolCall ? 'tool_use' : 'end_turn';
}
