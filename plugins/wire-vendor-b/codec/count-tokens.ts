// The InboundCodec of Anthropic's token counting ('anthropic.count_tokens') for a model bound to
// another vendor: the request is a Messages request without max_tokens, the answer
// {"input_tokens": N} from the upstream's own counter (OpenAI's /v1/responses/input_tokens).
import { RelayError, type InboundCodec } from '../../../core/plugin-api.ts';
import type { ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { renderAnthropicError } from './errors.ts';
import { messagesOwnership } from './forwarded-owners.ts';
import { decodeMessagesRequest } from './messages-request.ts';
import { messagesStreamEncoder } from './messages-stream.ts';

export const countTokensCodec: InboundCodec = {
  shape: 'anthropic.count_tokens',
  countsTokens: true,
  // max_tokens is not part of a count request; the Messages decoder needs one (it changes no count).
  decodeRequest: (body) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new RelayError('RELAY_ERR_BAD_REQUEST', 'The request body must be a JSON object.');
    return decodeMessagesRequest({ max_tokens: 1, ...body as Record<string, unknown> });
  },
  encodeResponse: (response) => ({ input_tokens: response.usage.input_tokens }),
  streamEncoder: messagesStreamEncoder,
  renderError: renderAnthropicError,
};

/**
 * Passed through, Anthropic counts the files a request names: another owner's is refused as on
 * /v1/messages (its size is not this caller's to learn). A count makes nothing, so nothing is recorded.
 */
export function checkedCountTokensCodec(state: ResponsesState): InboundCodec {
  return { ...countTokensCodec, ownership: { ...messagesOwnership(state), reader: () => null } };
}
