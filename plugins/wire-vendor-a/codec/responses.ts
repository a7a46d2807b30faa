// The InboundCodec of OpenAI Responses ('openai.responses'), used by /vendor-a and /agent-a.
import type { InboundCodec, ResponsesState } from '../../../core/plugin-api.ts';
import { presentParameters } from '../../../core/plugin-api/canonical.ts';
import { renderOpenAIError } from './errors.ts';
import { decodeResponsesRequest } from './responses-request.ts';
import { encodeResponsesResponse } from './responses-response.ts';
import { responsesStreamEncoder } from './responses-stream.ts';
import { responsesConversationState } from './responses-state.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const RESPONSES_DROPPED_PARAMETERS = ['store', 'include', 'service_tier', 'truncation', 'background', 'prompt_cache_key', 'text.verbosity', 'top_logprobs', 'max_tool_calls', 'client_metadata'] as const;

export const responsesCodec: InboundCodec = {
  shape: 'openai.responses',
  droppedParameters: (body) => presentParameters(body, RESPONSES_DROPPED_PARAMETERS),
  decodeRequest: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  streamEncoder: responsesStreamEncoder,
  renderError: renderOpenAIError,
};

/** The codec with Relay's Responses state: references resolve, `store` is honoured (so not dropped). */
export function statefulResponsesCodec(state: ResponsesState): InboundCodec {
  const dropped = state.enabled ? RESPONSES_DROPPED_PARAMETERS.filter((p) => p !== 'store') : RESPONSES_DROPPED_PARAMETERS;
  return { ...responsesCodec, droppedParameters: (body) => presentParameters(body, dropped), state: responsesConversationState(state) };
}
