// Anthropic Messages response JSON -> canonical response.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { ANTHROPIC_ORIGIN } from './messages-request.ts';
import { usageFromAnthropic } from './usage.ts';

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  pause_turn: 'end_turn',
  refusal: 'refusal',
  model_context_window_exceeded: 'max_tokens',
};

export function stopReasonFromAnthropic(reason: unknown): StopReason {
  return typeof reason === 'string' ? STOP_REASONS[reason] ?? 'end_turn' : 'end_turn';
}

interface ContentBlock { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; thinking?: unknown; signature?: unknown; data?: unknown }

export function partOfBlock(b: ContentBlock, customTools: ReadonlySet<string>): ContentPart | null {
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? { type: 'text', text: b.text } : null;
    case 'tool_use': {
      const name = String(b.name ?? '');
      return customTools.has(name)
        ? { type: 'tool_call', id: String(b.id ?? ''), name, arguments: unwrapCustomInput(b.input), tool_kind: 'custom' }
        : { type: 'tool_call', id: String(b.id ?? ''), name, arguments: JSON.stringify(b.input ?? {}), tool_kind: 'function' };
    }
    case 'thinking':
      return {
        type: 'reasoning', origin: ANTHROPIC_ORIGIN,
        ...(typeof b.thinking === 'string' && b.thinking !== '' ? { text: b.thinking } : {}),
        ...(typeof b.signature === 'string' && b.signature !== '' ? { signature: b.signature } : {}),
      };
    case 'redacted_thinking':
      return typeof b.data === 'string' ? { type: 'reasoning', origin: ANTHROPIC_ORIGIN, encrypted: b.data } : null;
    default:
      return null; // server tool blocks and others: dropped by rule
  }
}

export function decodeMessagesResponse(body: unknown, route: Route, request?: CanonicalRequest): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; content?: unknown; stop_reason?: unknown; stop_sequence?: unknown; usage?: unknown };
  if (!Array.isArray(json.content)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream message has no content array');
  const custom = customToolNames(request);
  const out: CanonicalResponse = {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content: (json.content as ContentBlock[]).map((b) => partOfBlock(b, custom)).filter((p): p is ContentPart => p !== null),
    stop_reason: stopReasonFromAnthropic(json.stop_reason),
    usage: usageFromAnthropic(json.usage) ?? emptyUsage(),
  };
  if (typeof json.stop_sequence === 'string') out.stop_sequence = json.stop_sequence;
  return out;
}
