// Anthropic Messages response JSON -> canonical response.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { ANTHROPIC_ORIGIN } from './messages-request.ts';
import { usageFromAnthropic } from './usage.ts';
import { citationFromAnthropic, isWebSearchUse, searchFromUse, withResult } from './web-search.ts';

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  pause_turn: 'pause_turn',
  refusal: 'refusal',
  model_context_window_exceeded: 'max_tokens',
};

export function stopReasonFromAnthropic(reason: unknown): StopReason {
  return typeof reason === 'string' ? STOP_REASONS[reason] ?? 'end_turn' : 'end_turn';
}

interface ContentBlock { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; thinking?: unknown; signature?: unknown; data?: unknown; citations?: unknown; tool_use_id?: unknown }

export function partOfBlock(b: ContentBlock, customTools: ReadonlySet<string>): ContentPart | null {
  switch (b.type) {
    case 'text': {
      if (typeof b.text !== 'string') return null;
      const citations = Array.isArray(b.citations) ? b.citations.map(citationFromAnthropic).filter((c) => c !== null) : [];
      return citations.length > 0 ? { type: 'text', text: b.text, citations } : { type: 'text', text: b.text };
    }
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
      return null; // server tool blocks other than web search (paired in contentParts), and others: dropped by rule
  }
}

/** The blocks of a message as canonical parts: a web search's server_tool_use and its result become one part. */
export function contentParts(blocks: ContentBlock[], customTools: ReadonlySet<string>): ContentPart[] {
  const out: ContentPart[] = [];
  const searches = new Map<string, number>();
  for (const b of blocks) {
    if (isWebSearchUse(b)) {
      searches.set(String(b.id ?? ''), out.length);
      out.push(searchFromUse(b as Record<string, unknown>));
      continue;
    }
    const at = b.type === 'web_search_tool_result' ? searches.get(String(b.tool_use_id ?? '')) : undefined;
    if (at !== undefined) {
      out[at] = withResult(out[at] as Extract<ContentPart, { type: 'web_search_call' }>, b as Record<string, unknown>);
      continue;
    }
    const part = partOfBlock(b, customTools);
    if (part) out.push(part);
  }
  return out;
}

export function decodeMessagesResponse(body: unknown, route: Route, request?: CanonicalRequest): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; content?: unknown; stop_reason?: unknown; stop_sequence?: unknown; usage?: unknown };
  if (!Array.isArray(json.content)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream message has no content array');
  const custom = customToolNames(request);
  const out: CanonicalResponse = {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content: contentParts(json.content as ContentBlock[], custom),
    stop_reason: stopReasonFromAnthropic(json.stop_reason),
    usage: usageFromAnthropic(json.usage) ?? emptyUsage(),
  };
  if (typeof json.stop_sequence === 'string') out.stop_sequence = json.stop_sequence;
  return out;
}
