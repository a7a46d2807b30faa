// The InboundCodec of OpenAI Responses ('openai.responses'), used by /vendor-a and /agent-a.
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { renderOpenAIError } from './errors.ts';
import { decodeResponsesRequest } from './responses-request.ts';
import { encodeResponsesResponse } from './responses-response.ts';
import { responsesStreamEncoder } from './responses-stream.ts';

export const responsesCodec: InboundCodec = {
  shape: 'openai.responses',
  decodeRequest: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  streamEncoder: responsesStreamEncoder,
  renderError: renderOpenAIError,
};
