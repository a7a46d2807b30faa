// The upstream side of Anthropic's token counter ('anthropic.count_tokens'): a Messages request
// without what counting does not take; the answer is a count, not a generation.
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { emptyUsage, messagesStreamInspector } from '../../../core/plugin-api/canonical.ts';
import { RelayError } from '../../../core/plugin-api.ts';
import { decodeAnthropicError } from './errors.ts';
import { encodeMessagesRequest } from './messages-request.ts';
import { messagesStreamDecoder } from './messages-stream.ts';

/** The fields /v1/messages/count_tokens takes (the rest of a Messages request changes no count). */
const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking'];

export const countTokensUpstream: ShapeCodec = {
  encodeRequest(request, route) {
    const full = encodeMessagesRequest(request, route) as Record<string, unknown>;
    return Object.fromEntries(COUNTED.filter((k) => full[k] !== undefined).map((k) => [k, full[k]]));
  },
  decodeResponse(body) {
    const count = (body as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream\'s token count has no input_tokens');
    return { id: 'count', model: '', content: [], stop_reason: 'end_turn', usage: { ...emptyUsage(), input_tokens: count } };
  },
  streamDecoder: messagesStreamDecoder,
  decodeError: decodeAnthropicError,
  // A count is not a generation: nothing to bill (as when count_tokens is passed through).
  usageFromBody: () => null,
  streamInspector: messagesStreamInspector,
};
