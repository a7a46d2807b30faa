// The InboundCodec of Anthropic Messages ('anthropic.messages').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { presentParameters } from '../../../core/plugin-api/canonical.ts';
import { renderAnthropicError } from './errors.ts';
import { decodeMessagesRequest } from './messages-request.ts';
import { encodeMessagesResponse } from './messages-response.ts';
import { messagesStreamEncoder } from './messages-stream.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const MESSAGES_DROPPED_PARAMETERS = ['top_k', 'service_tier', 'context_management', 'container', 'mcp_servers'] as const;

/** Anthropic server tools (typed tools other than custom), which run inside Anthropic: named as `tools.<type>`. */
export function droppedServerTools(body: unknown): string[] {
  const tools = body !== null && typeof body === 'object' ? (body as { tools?: unknown }).tools : undefined;
  const names = new Set<string>();
  for (const tool of Array.isArray(tools) ? tools : []) {
    const type = tool !== null && typeof tool === 'object' ? (tool as { type?: unknown }).type : undefined;
    if (typeof type === 'string' && type !== 'custom') names.add(`tools.${type}`);
  }
  return [...names];
}

export const messagesCodec: InboundCodec = {
  shape: 'anthropic.messages',
  droppedParameters: (body) => [...presentParameters(body, MESSAGES_DROPPED_PARAMETERS), ...droppedServerTools(body)],
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: messagesStreamEncoder,
  renderError: renderAnthropicError,
};
