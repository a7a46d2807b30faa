// OpenAI Responses response JSON -> canonical response.
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { OPENAI_ORIGIN } from './responses-request.ts';
import { usageFromResponses } from './usage.ts';
import { citationFromAnnotation, searchFromItem } from './web-search.ts';

interface OutputItem {
  type?: unknown; id?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown; input?: unknown;
  content?: Array<{ type?: unknown; text?: unknown; refusal?: unknown; annotations?: unknown }>;
  status?: unknown; action?: Record<string, unknown>;
  summary?: Array<{ text?: unknown }>;
  encrypted_content?: unknown;
}

/** Stop reason of a finished response: status, incomplete reason, and whether it called tools. */
export function stopReasonFromResponse(response: { status?: unknown; incomplete_details?: { reason?: unknown } | null }, calledTools: boolean, refused: boolean): StopReason {
  if (response.status === 'incomplete') return response.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'max_tokens';
  if (response.status === 'failed') return 'error';
  if (calledTools) return 'tool_use';
  return refused ? 'refusal' : 'end_turn';
}

/** One output item -> canonical parts (server tool calls other than web search, and other items, are dropped). */
export function partsOfItem(item: OutputItem): ContentPart[] {
  switch (item.type) {
    case 'message':
      return (item.content ?? []).flatMap((c): ContentPart[] => {
        if (c.type === 'output_text' && typeof c.text === 'string') {
          const text = c.text;
          const citations = Array.isArray(c.annotations) ? c.annotations.map((a) => citationFromAnnotation(a, text)).filter((a) => a !== null) : [];
          return [citations.length > 0 ? { type: 'text', text, citations } : { type: 'text', text }];
        }
        if (c.type === 'refusal' && typeof c.refusal === 'string') return [{ type: 'refusal', text: c.refusal }];
        return [];
      });
    case 'reasoning': {
      const text = (item.summary ?? []).map((s) => (typeof s.text === 'string' ? s.text : '')).filter((t) => t !== '').join('\n\n')
        || (item.content ?? []).map((c) => (typeof c.text === 'string' ? c.text : '')).join('');
      return [{
        type: 'reasoning', origin: OPENAI_ORIGIN,
        ...(text === '' ? {} : { text }),
        ...(typeof item.encrypted_content === 'string' ? { encrypted: item.encrypted_content } : {}),
        ...(typeof item.id === 'string' ? { id: item.id } : {}),
      }];
    }
    case 'function_call':
      return [{ type: 'tool_call', id: String(item.call_id ?? ''), name: String(item.name ?? ''), arguments: typeof item.arguments === 'string' ? item.arguments : '', tool_kind: 'function' }];
    case 'custom_tool_call':
      return [{ type: 'tool_call', id: String(item.call_id ?? ''), name: String(item.name ?? ''), arguments: typeof item.input === 'string' ? item.input : '', tool_kind: 'custom' }];
    case 'web_search_call':
      return [searchFromItem(item as Parameters<typeof searchFromItem>[0])];
    default:
      return [];
  }
}

export function decodeResponsesResponse(body: unknown, route: Route): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; output?: unknown; usage?: unknown; status?: unknown; incomplete_details?: { reason?: unknown } | null };
  if (!Array.isArray(json.output)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream response has no output array');
  const content = (json.output as OutputItem[]).flatMap(partsOfItem);
  return {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content,
    stop_reason: stopReasonFromResponse(json, content.some((p) => p.type === 'tool_call'), content.some((p) => p.type === 'refusal')),
    usage: usageFromResponses(json.usage) ?? emptyUsage(),
  };
}
