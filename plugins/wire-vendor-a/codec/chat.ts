// The InboundCodec of OpenAI Chat Completions ('openai.chat').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { decodeChatRequest } from './chat-request.ts';
import { encodeChatResponse } from './chat-response.ts';
import { chatStreamEncoder } from './chat-stream.ts';
import { renderOpenAIError } from './errors.ts';

export const chatCodec: InboundCodec = {
  shape: 'openai.chat',
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  streamEncoder: chatStreamEncoder,
  renderError: renderOpenAIError,
};
