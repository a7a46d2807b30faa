// The upstream side of Anthropic Messages ('anthropic.messages').
import { decodeAnthropicError } from './errors.ts';
import { encodeMessagesRequest } from './messages-request.ts';
import { decodeMessagesResponse } from './messages-response.ts';
import { messagesStreamDecoder } from './messages-stream.ts';
import { messagesStreamInspector, usageFromMessages, type ShapeCodec } from '../../../core/plugin-api/canonical.ts';

export const messagesUpstream: ShapeCodec = {
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  streamDecoder: messagesStreamDecoder,
  decodeError: decodeAnthropicError,
  usageFromBody: (body) => usageFromMessages((body as { usage?: unknown } | null)?.usage),
  streamInspector: messagesStreamInspector,
};
