// Translation between the canonical shape and Bedrock's Converse ('bedrock.converse'), and the
// passthrough reading of Anthropic Messages on Bedrock ('anthropic.messages'): the VendorAdapter
// hooks of the Bedrock adapter (pure functions, no HTTP).
import { dispatchByShape, type ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { converseStreamInspector } from './converse-inspector.ts';
import { encodeConverseRequest } from './converse-request.ts';
import { decodeConverseResponse } from './converse-response.ts';
import { converseStreamDecoder } from './converse-stream.ts';
import { decodeBedrockError } from './errors.ts';
import { messagesPassthrough } from './messages-passthrough.ts';
import { usageFromConverse } from './usage.ts';

export const CONVERSE_SHAPE = 'bedrock.converse';
export const MESSAGES_SHAPE = 'anthropic.messages';
/** Passed through only (CountTokens); errors read by the fallback, no usage. */
export const COUNTING_SHAPE = 'anthropic.count_tokens';

export const converseUpstream: ShapeCodec = {
  encodeRequest: encodeConverseRequest,
  decodeResponse: decodeConverseResponse,
  streamDecoder: converseStreamDecoder,
  decodeError: decodeBedrockError,
  usageFromBody: (body) => usageFromConverse((body as { usage?: unknown } | null)?.usage),
  streamInspector: converseStreamInspector,
};

export const { encodeRequest, decodeResponse, streamDecoder, decodeError, usageFromBody, streamInspector } = dispatchByShape('Bedrock', {
  [CONVERSE_SHAPE]: converseUpstream,
  [MESSAGES_SHAPE]: messagesPassthrough,
}, converseUpstream);

export { CONVERSE_RESPONSE_DROPPED } from './answer-parts.ts';
export { CONVERSE_REQUEST_DROPPED, BEDROCK_ORIGIN, converseToolId } from './converse-request.ts';
export { exceptionName, statusForException, decodeBedrockError, bedrockErrorMessage as bedrockErrorMessageOf } from './errors.ts';
export { EFFORT_BUDGETS, isClaudeModel } from './thinking.ts';
