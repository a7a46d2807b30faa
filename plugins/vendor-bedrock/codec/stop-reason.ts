// Converse stopReason -> canonical stop reason; the matched stop sequence, when the model says
// which (Claude puts it in additionalModelResponseFields.stop_sequence).
import type { StopReason } from '../../../core/plugin-api/canonical.ts';

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  model_context_window_exceeded: 'max_tokens',
};

export function stopReasonFromConverse(reason: unknown): StopReason {
  return typeof reason === 'string' ? STOP_REASONS[reason] ?? 'end_turn' : 'end_turn';
}

export function stopSequenceOf(fields: unknown): string | undefined {
  const value = (fields as { stop_sequence?: unknown } | null | undefined)?.stop_sequence;
  return typeof value === 'string' ? value : undefined;
}
