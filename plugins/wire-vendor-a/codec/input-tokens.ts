// The InboundCodec of OpenAI's token counting ('openai.input_tokens', POST /v1/responses/input_tokens)
// for a model bound to another vendor: a Responses request in, {"object":"response.input_tokens",
// "input_tokens": N} out, counted by the upstream's own counter (Anthropic's count_tokens).
import type { InboundCodec } from '../../../core/plugin-api.ts';
import type { ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { renderOpenAIError } from './errors.ts';
import { responsesOwnership } from './forwarded-owners.ts';
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

/**
 * Passed through, OpenAI counts the conversation a previous_response_id or item_reference names:
 * another owner's is refused as on /v1/responses (its size is not this caller's to learn). A count
 * makes nothing upstream, so nothing of its answer is recorded.
 */
export function checkedInputTokensCodec(state: ResponsesState): InboundCodec {
  return { ...inputTokensCodec, ownership: { ...responsesOwnership(state), reader: () => null } };
}
