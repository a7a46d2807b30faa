// The InboundCodec of Anthropic Messages ('anthropic.messages').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { presentParameters } from '../../../core/plugin-api/canonical.ts';
import { renderAnthropicError } from './errors.ts';
import { decodeMessagesRequest } from './messages-request.ts';
import { encodeMessagesResponse } from './messages-response.ts';
import { messagesStreamEncoder } from './messages-stream.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const MESSAGES_DROPPED_PARAMETERS = ['top_k', 'service_tier', 'context_management', 'container', 'mcp_servers'] as const;

export const messagesCodec: InboundCodec = {
  shape: 'anthropic.messages',
  droppedParameters: (body) => presentParameters(body, MESSAGES_DROPPED_PARAMETERS),
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: messagesStreamEncoder,
  renderError: renderAnthropicError,
};
