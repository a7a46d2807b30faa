// The upstream side of Anthropic Messages ('anthropic.messages').
import { decodeAnthropicError } from './errors.ts';
import { encodeMessagesRequest } from './messages-request.ts';
import { decodeMessagesResponse } from './messages-response.ts';
import { messagesStreamDecoder } from './messages-stream.ts';
import { messagesStreamInspector, usageOfMessagesAnswer, type MessagesAnswer, type ShapeCodec } from '../../../core/plugin-api/canonical.ts';

export const messagesUpstream: ShapeCodec = {
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  streamDecoder: messagesStreamDecoder,
  decodeError: decodeAnthropicError,
  usageFromBody: (body) => usageOfMessagesAnswer(body as MessagesAnswer | null),
  streamInspector: messagesStreamInspector,
};
