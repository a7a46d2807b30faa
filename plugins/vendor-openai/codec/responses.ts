// The upstream side of OpenAI Responses ('openai.responses').
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { decodeOpenAIError } from './errors.ts';
import { responsesStreamInspector } from './responses-inspector.ts';
import { encodeResponsesRequest } from './responses-request.ts';
import { decodeResponsesResponse } from './responses-response.ts';
import { responsesStreamDecoder } from './responses-stream.ts';
import { usageOfResponse } from './usage.ts';

export const responsesUpstream: ShapeCodec = {
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  streamDecoder: responsesStreamDecoder,
  decodeError: decodeOpenAIError,
  usageFromBody: (body) => usageOfResponse(body as { usage?: unknown; output?: unknown; service_tier?: unknown } | null),
  streamInspector: responsesStreamInspector,
};
