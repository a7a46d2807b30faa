// Translation between OpenAI's wire shapes (Chat Completions, Responses) and the canonical shape,
// for clients that speak them to Relay. Pure functions; the routes live in the plugin's index.ts.
export { chatCodec } from './chat.ts';
export { responsesCodec, statefulResponsesCodec } from './responses.ts';
export { checkedInputTokensCodec, inputTokensCodec } from './input-tokens.ts';
export { renderOpenAIError, openaiErrorBody, type OpenAIErrorBody } from './errors.ts';
export { CHAT_REQUEST_DROPPED } from './chat-request.ts';
export { CHAT_RESPONSE_DROPPED } from './chat-response.ts';
export { RESPONSES_REQUEST_DROPPED } from './responses-request.ts';
export { RESPONSES_RESPONSE_DROPPED } from './responses-response.ts';
export { NAMESPACE_SEPARATOR } from './namespace-tools.ts';
