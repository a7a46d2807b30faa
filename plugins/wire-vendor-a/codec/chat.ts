// The InboundCodec of OpenAI Chat Completions ('openai.chat').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { presentParameters } from '../../../core/plugin-api/canonical.ts';
import { decodeChatRequest } from './chat-request.ts';
import { encodeChatResponse } from './chat-response.ts';
import { chatStreamEncoder } from './chat-stream.ts';
import { renderOpenAIError } from './errors.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const CHAT_DROPPED_PARAMETERS = ['n', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'seed', 'logprobs', 'top_logprobs', 'service_tier', 'store', 'prediction', 'modalities', 'audio'] as const;

export const chatCodec: InboundCodec = {
  shape: 'openai.chat',
  droppedParameters: (body) => presentParameters(body, CHAT_DROPPED_PARAMETERS),
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  streamEncoder: chatStreamEncoder,
  renderError: renderOpenAIError,
};
