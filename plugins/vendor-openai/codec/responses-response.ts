// OpenAI Responses response JSON -> canonical response.
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, toolArgumentsText, type CanonicalRequest, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { OPENAI_ORIGIN } from './responses-request.ts';
import { usageOfResponse } from './usage.ts';
import { searchFromItem } from './web-search.ts';
import { citationsOf, nameKind, TOOL_ARGUMENTS_NAME } from './answer-names.ts';

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

/** What the answer decoders drop, and why. Pinned by test/translation/drop-names.test.ts. */
export const OPENAI_RESPONSE_DROPPED = {
  'output items of server tools other than web search, and item kinds Relay does not know': 'named by their type (`code_interpreter_call`, `file_search_call`, `image_generation_call`, `mcp_call`, `computer_call`, ...): canonical has no part for them',
  'the same in streamed answers': 'named by their type, once each (in the header, or an x-relay-dropped trailer once the stream has begun)',
  'annotations other than url_citation (file citations, file paths)': 'named by their type: a canonical citation is a URL (the text stays)',
  'annotations other than url_citation in streamed answers': 'named by their type, as whole',
  'message content other than output_text and refusal': 'named by its type',
  'function_call arguments and custom_tool_call input that are not a string': 'an object sent as its JSON text; another value named `tool_call.arguments`',
  'the same given whole at the end of a streamed item': 'as in whole answers',
} as const;

/** One output item -> canonical parts; server tool calls other than web search, and other items, are named. */
export function partsOfItem(item: OutputItem, dropped: string[]): ContentPart[] {
  switch (item.type) {
    case 'message':
      return (item.content ?? []).flatMap((c): ContentPart[] => {
        if (c.type === 'output_text' && typeof c.text === 'string') {
          const text = c.text;
          const citations = citationsOf(c.annotations, text, dropped);
          return [citations.length > 0 ? { type: 'text', text, citations } : { type: 'text', text }];
        }
        if (c.type === 'refusal' && typeof c.refusal === 'string') return [{ type: 'refusal', text: c.refusal }];
        nameKind(c.type, dropped);
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
      return [{ type: 'tool_call', id: String(item.call_id ?? ''), name: String(item.name ?? ''), arguments: toolArgumentsText(item.arguments, dropped, TOOL_ARGUMENTS_NAME), tool_kind: 'function' }];
    case 'custom_tool_call':
      return [{ type: 'tool_call', id: String(item.call_id ?? ''), name: String(item.name ?? ''), arguments: toolArgumentsText(item.input, dropped, TOOL_ARGUMENTS_NAME), tool_kind: 'custom' }];
    case 'web_search_call':
      return [searchFromItem(item as Parameters<typeof searchFromItem>[0])];
    default:
      nameKind(item.type, dropped);
      return [];
  }
}

export function decodeResponsesResponse(body: unknown, route: Route, _request?: CanonicalRequest, dropped: string[] = []): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; output?: unknown; usage?: unknown; status?: unknown; incomplete_details?: { reason?: unknown } | null };
  if (!Array.isArray(json.output)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream response has no output array');
  const content = (json.output as OutputItem[]).flatMap((item) => partsOfItem(item, dropped));
  return {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content,
    stop_reason: stopReasonFromResponse(json, content.some((p) => p.type === 'tool_call'), content.some((p) => p.type === 'refusal')),
    usage: usageOfResponse(json) ?? emptyUsage(),
  };
}
