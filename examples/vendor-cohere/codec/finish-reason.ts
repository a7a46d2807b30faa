// Cohere finish_reason -> canonical stop reason. TOOL_CALL is tool_use; COMPLETE after tool
// calls is tool_use too (the answer asks for their results).
import type { StopReason } from 'relay-gateway/canonical';

export function stopReasonFromCohere(finishReason: unknown, hasToolCall: boolean): StopReason {
  switch (finishReason) {
    case 'MAX_TOKENS':
      return 'max_tokens';
    case 'STOP_SEQUENCE':
      return 'stop_sequence';
    case 'ERROR':
    case 'TIMEOUT':
      return 'error';
    case 'TOOL_CALL':
      return 'tool_use';
    default:
      return hasToolCall ? 'tool_use' : 'end_turn';
  }
}
