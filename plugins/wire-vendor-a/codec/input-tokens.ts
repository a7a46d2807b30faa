// The InboundCodec of OpenAI's token counting ('openai.input_tokens', POST /v1/responses/input_tokens)
// for a model bound to another vendor: a Responses request in, {"object":"response.input_tokens",
// "input_tokens": N} out, counted by the upstream's own counter (Anthropic's count_tokens).
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { renderOpenAIError } from './errors.ts';
import { decodeResponsesRequest } from './responses-request.ts';
import { responsesStreamEncoder } from './responses-stream.ts';

export const inputTokensCodec: InboundCodec = {
  shape: 'openai.input_tokens',
  countsTokens: true,
  decodeRequest: decodeResponsesRequest,
  encodeResponse: (response) => ({ object: 'response.input_tokens', input_tokens: response.usage.input_tokens }),
  streamEncoder: responsesStreamEncoder,
  renderError: renderOpenAIError,
};
