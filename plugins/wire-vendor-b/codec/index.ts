// Translation between Anthropic's Messages shape and the canonical shape, for clients that
// speak it to Relay. Pure functions; the routes live in the plugin's index.ts.
export { messagesCodec } from './messages.ts';
export { checkedCountTokensCodec, countTokensCodec } from './count-tokens.ts';
export { renderAnthropicError, anthropicErrorBody, type AnthropicErrorBody } from './errors.ts';
export { MESSAGES_REQUEST_DROPPED } from './messages-request.ts';
export { MESSAGES_RESPONSE_DROPPED } from './messages-response.ts';
export { EFFORT_BUDGETS, effortForBudget } from './thinking-budget.ts';
