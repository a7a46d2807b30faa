// The upstream side of Anthropic Messages ('anthropic.messages').
import { decodeAnthropicError } from './errors.ts';
import { messagesStreamInspector } from './messages-inspector.ts';
import { encodeMessagesRequest } from './messages-request.ts';
import { decodeMessagesResponse } from './messages-response.ts';
import { messagesStreamDecoder } from './messages-stream.ts';
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { usageFromAnthropic } from './usage.ts';

export const messagesUpstream: ShapeCodec = {
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  streamDecoder: messagesStreamDecoder,
  decodeError: decodeAnthropicError,
  usageFromBody: (body) => usageFromAnthropic((body as { usage?: unknown } | null)?.usage),
  streamInspector: messagesStreamInspector,
};
