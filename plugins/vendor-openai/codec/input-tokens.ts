// The upstream side of OpenAI's token counter ('openai.input_tokens', POST /v1/responses/input_tokens):
// a Responses request without what counting does not take; the answer is a count, not a generation.
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { emptyUsage } from '../../../core/plugin-api/canonical.ts';
import { RelayError } from '../../../core/plugin-api.ts';
import { decodeOpenAIError } from './errors.ts';
import { responsesStreamInspector } from './responses-inspector.ts';
import { encodeResponsesRequest } from './responses-request.ts';
import { responsesStreamDecoder } from './responses-stream.ts';

/** The fields /v1/responses/input_tokens takes (the rest of a Responses request changes no count). */
export const COUNTED = ['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'text'];

export const inputTokensUpstream: ShapeCodec = {
  encodeRequest(request, route) {
    // Stop sequences change no count (and a Responses body cannot carry them).
    const full = encodeResponsesRequest(request.stop === undefined ? request : { ...request, stop: undefined }, route) as Record<string, unknown>;
    return Object.fromEntries(COUNTED.filter((k) => full[k] !== undefined).map((k) => [k, full[k]]));
  },
  decodeResponse(body) {
    const count = (body as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream\'s token count has no input_tokens');
    return { id: 'count', model: '', content: [], stop_reason: 'end_turn', usage: { ...emptyUsage(), input_tokens: count } };
  },
  streamDecoder: responsesStreamDecoder,
  decodeError: decodeOpenAIError,
  // A count is not a generation: nothing to bill.
  usageFromBody: () => null,
  streamInspector: responsesStreamInspector,
};
