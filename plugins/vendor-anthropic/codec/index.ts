// Translation between the canonical shape and Anthropic's upstream shape, dispatching on the
// shape id: the VendorAdapter hooks of the Anthropic adapter (pure functions, no HTTP).
// 'anthropic.count_tokens' is passed through, or translated from OpenAI's input_tokens; it has no usage.
import { dispatchByShape } from '../../../core/plugin-api/canonical.ts';
import { messagesUpstream } from './messages.ts';
import { countTokensUpstream } from './count-tokens.ts';

export const { encodeRequest, decodeResponse, streamDecoder, decodeError, usageFromBody, streamInspector } = dispatchByShape('Anthropic', {
  'anthropic.messages': messagesUpstream,
  'anthropic.count_tokens': countTokensUpstream,
}, messagesUpstream);

export { MESSAGES_UPSTREAM_DROPPED, ANTHROPIC_ORIGIN, anthropicToolId } from './messages-request.ts';
export { EFFORT_BUDGETS, DEFAULT_MAX_TOKENS, thinkingFor } from './thinking-budget.ts';
export { ANTHROPIC_RESPONSE_DROPPED } from './messages-response.ts';
