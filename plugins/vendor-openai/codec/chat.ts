// The upstream side of OpenAI Chat Completions ('openai.chat').
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { chatStreamInspector } from './chat-inspector.ts';
import { encodeChatRequest } from './chat-request.ts';
import { decodeChatResponse } from './chat-response.ts';
import { chatStreamDecoder } from './chat-stream.ts';
import { decodeOpenAIError } from './errors.ts';
import { usageOfChatAnswer } from './usage.ts';

export const chatUpstream: ShapeCodec = {
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  streamDecoder: chatStreamDecoder,
  decodeError: decodeOpenAIError,
  usageFromBody: (body) => usageOfChatAnswer(body as { usage?: unknown; service_tier?: unknown } | null),
  streamInspector: chatStreamInspector,
};
