// The InboundCodec of Anthropic Messages ('anthropic.messages').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { presentParameters, unknownParameters } from '../../../core/plugin-api/canonical.ts';
import { renderAnthropicError } from './errors.ts';
import { MESSAGES_REQUEST_MEMBERS, WEB_SEARCH_TOOL_TYPE, decodeMessagesRequest } from './messages-request.ts';
import { encodeMessagesResponse } from './messages-response.ts';
import { messagesStreamEncoder } from './messages-stream.ts';
import { withoutForeignBlocks } from './foreign-blocks.ts';
import { fastSpeed } from './fast-mode.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const MESSAGES_DROPPED_PARAMETERS = ['top_k', 'service_tier', 'speed', 'context_management', 'container', 'mcp_servers'] as const;
/** What is read or named; any other member is named as unknown. */
const MESSAGES_KNOWN = new Set<string>([...MESSAGES_REQUEST_MEMBERS, ...MESSAGES_DROPPED_PARAMETERS, 'cache_control']);

/** Anthropic server tools (typed tools other than custom and web search), which run inside Anthropic: named as `tools.<type>`. */
export function droppedServerTools(body: unknown): string[] {
  const tools = body !== null && typeof body === 'object' ? (body as { tools?: unknown }).tools : undefined;
  const names = new Set<string>();
  for (const tool of Array.isArray(tools) ? tools : []) {
    const type = tool !== null && typeof tool === 'object' ? (tool as { type?: unknown }).type : undefined;
    if (typeof type === 'string' && type !== 'custom' && !WEB_SEARCH_TOOL_TYPE.test(type)) names.add(`tools.${type}`);
  }
  return [...names];
}

const CANONICAL_BLOCKS = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'search_result']);
/** A web search's blocks, which become a canonical web search. */
const isWebSearchBlock = (b: { type?: unknown; name?: unknown }): boolean =>
  (b.type === 'server_tool_use' && b.name === 'web_search') || b.type === 'web_search_tool_result';

/**
 * What of the history has no canonical form: server tool blocks (`messages.<type>`, e.g.
 * `messages.web_search_tool_result`), and a document's `citations` and `context`.
 */
export function droppedHistory(body: unknown): string[] {
  const messages = body !== null && typeof body === 'object' ? (body as { messages?: unknown }).messages : undefined;
  if (!Array.isArray(messages)) return [];
  const names = new Set<string>();
  for (const message of messages) {
    const content = message !== null && typeof message === 'object' ? (message as { content?: unknown }).content : undefined;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      if (block === null || typeof block !== 'object') continue;
      const b = block as { type?: unknown; citations?: { enabled?: unknown } | null; context?: unknown };
      if (typeof b.type !== 'string') continue;
      if (!CANONICAL_BLOCKS.has(b.type) && !isWebSearchBlock(b)) names.add(`messages.${b.type}`);
      else if (b.type === 'document') {
        if (b.citations?.enabled === true) names.add('citations');
        if (typeof b.context === 'string' && b.context !== '') names.add('document.context');
      }
    }
  }
  return [...names];
}

export const messagesCodec: InboundCodec = {
  shape: 'anthropic.messages',
  droppedParameters: (body) => [...presentParameters(body, MESSAGES_DROPPED_PARAMETERS), ...droppedServerTools(body), ...droppedHistory(body), ...unknownParameters(body, MESSAGES_KNOWN)],
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: messagesStreamEncoder,
  renderError: renderAnthropicError,
  passthroughBody: withoutForeignBlocks,
  fastMode: fastSpeed,
};
