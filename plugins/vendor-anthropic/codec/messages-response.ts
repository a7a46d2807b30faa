// Anthropic Messages response JSON -> canonical response.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, usageOfMessagesAnswer, type CanonicalResponse, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, toolArgumentsText, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { ANTHROPIC_ORIGIN } from './messages-request.ts';
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

/** What the answer decoders drop, and why. Pinned by test/translation/drop-names.test.ts. */
export const ANTHROPIC_RESPONSE_DROPPED = {
  'server tool blocks other than web search, and block kinds Relay does not know': 'named by their block type (a web fetch or code execution `server_tool_use`, `code_execution_tool_result`, `mcp_tool_use`, `container_upload`, ...): canonical has no part for them',
  'the same in streamed answers': 'named by their block type, once each (in the header, or an x-relay-dropped trailer once the stream has begun)',
  'document citations of text (char, page and content block locations)': 'named `citations`: a canonical citation is a URL (the text cited stays in the answer)',
  'document citations in streamed answers (citations_delta)': 'named `citations`, as whole',
  'tool_use inputs that are not an object': 'a string taken as the arguments text as it is (never encoded again), an array as its JSON; another value (a number, a boolean) named `tool_use.input` and read as no input (the arguments `{}` of a function, the empty text of a custom tool)',
  'the same in streamed answers (the input of content_block_start, a partial_json that is not a string)': 'read the same way: a string or an array kept, another value named `tool_use.input` and read as no input',
} as const;

/** The name of a tool_use input (or streamed partial_json) that is neither text, an object nor absent. */
export const TOOL_INPUT_NAME = 'tool_use.input';

/** Names a block type the decoders have no canonical part for, once. */
export function nameBlockType(type: unknown, dropped: string[]): void {
  if (typeof type === 'string' && !dropped.includes(type)) dropped.push(type);
}

interface ContentBlock { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; thinking?: unknown; signature?: unknown; data?: unknown; citations?: unknown; tool_use_id?: unknown }

export function partOfBlock(b: ContentBlock, customTools: ReadonlySet<string>, dropped: string[]): ContentPart | null {
  switch (b.type) {
    case 'text': {
      if (typeof b.text !== 'string') return null;
      const listed: unknown[] = Array.isArray(b.citations) ? b.citations : [];
      const citations = listed.map(citationFromAnthropic).filter((c) => c !== null);
      if (citations.length < listed.length) nameBlockType('citations', dropped);
      return citations.length > 0 ? { type: 'text', text: b.text, citations } : { type: 'text', text: b.text };
    }
    case 'tool_use': {
      const name = String(b.name ?? '');
      // Read as Bedrock and OpenAI read theirs: 42 is named, not passed on as the text "42".
      const args = toolArgumentsText(b.input, dropped, TOOL_INPUT_NAME);
      return customTools.has(name)
        ? { type: 'tool_call', id: String(b.id ?? ''), name, arguments: unwrapCustomInput(args), tool_kind: 'custom' }
        : { type: 'tool_call', id: String(b.id ?? ''), name, arguments: args || '{}', tool_kind: 'function' };
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
      // Server tool blocks other than web search (paired in contentParts), and kinds Relay does not know.
      nameBlockType(b.type, dropped);
      return null;
  }
}

/** The blocks of a message as canonical parts: a web search's server_tool_use and its result become one part. */
export function contentParts(blocks: ContentBlock[], customTools: ReadonlySet<string>, dropped: string[]): ContentPart[] {
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
    const part = partOfBlock(b, customTools, dropped);
    if (part) out.push(part);
  }
  return out;
}

export function decodeMessagesResponse(body: unknown, route: Route, request?: CanonicalRequest, dropped: string[] = []): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; content?: unknown; stop_reason?: unknown; stop_sequence?: unknown; usage?: unknown };
  if (!Array.isArray(json.content)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream message has no content array');
  const custom = customToolNames(request);
  const out: CanonicalResponse = {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content: contentParts(json.content as ContentBlock[], custom, dropped),
    stop_reason: stopReasonFromAnthropic(json.stop_reason),
    usage: usageOfMessagesAnswer(json) ?? emptyUsage(),
  };
  if (typeof json.stop_sequence === 'string') out.stop_sequence = json.stop_sequence;
  return out;
}
