// The InboundCodec of Anthropic Messages ('anthropic.messages').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { renderAnthropicError } from './errors.ts';
import { decodeMessagesRequest } from './messages-request.ts';
import { encodeMessagesResponse } from './messages-response.ts';
import { messagesStreamEncoder } from './messages-stream.ts';

export const messagesCodec: InboundCodec = {
  shape: 'anthropic.messages',
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: messagesStreamEncoder,
  renderError: renderAnthropicError,
};
