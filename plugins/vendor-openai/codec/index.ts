// Translation between the canonical shape and OpenAI's upstream shapes, dispatching on the
// shape id: the VendorAdapter hooks of the OpenAI adapter (pure functions, no HTTP).
import { dispatchByShape } from '../../../core/plugin-api/canonical.ts';
import { chatUpstream } from './chat.ts';
import { embeddingsUpstream } from './embeddings.ts';
import { responsesUpstream } from './responses.ts';
import { inputTokensUpstream } from './input-tokens.ts';

export const { encodeRequest, decodeResponse, streamDecoder, decodeError, usageFromBody, streamInspector } = dispatchByShape('OpenAI', {
  'openai.chat': chatUpstream,
  'openai.responses': responsesUpstream,
  'openai.embeddings': embeddingsUpstream,
  'openai.input_tokens': inputTokensUpstream,
}, chatUpstream);

export { CHAT_UPSTREAM_DROPPED } from './chat-request.ts';
export { RESPONSES_UPSTREAM_DROPPED, OPENAI_ORIGIN } from './responses-request.ts';
export { OPENAI_RESPONSE_DROPPED } from './responses-response.ts';
export { OPENAI_CHAT_RESPONSE_DROPPED } from './chat-response.ts';
