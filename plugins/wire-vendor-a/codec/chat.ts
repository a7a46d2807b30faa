// The InboundCodec of OpenAI Chat Completions ('openai.chat').
import type { InboundCodec } from '../../../core/plugin-api.ts';
import { presentParameters, unknownParameters } from '../../../core/plugin-api/canonical.ts';
import { CHAT_REQUEST_MEMBERS, decodeChatRequest } from './chat-request.ts';
import { encodeChatResponse } from './chat-response.ts';
import { chatStreamEncoder } from './chat-stream.ts';
import { renderOpenAIError } from './errors.ts';
import { priorityTier } from './fast-mode.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const CHAT_DROPPED_PARAMETERS = [
  'n', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'seed', 'logprobs', 'top_logprobs', 'service_tier', 'store', 'prediction', 'modalities', 'audio',
  'verbosity', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention',
] as const;
/** What is read, named or refused; any other member is named as unknown. */
const CHAT_KNOWN = new Set<string>([...CHAT_REQUEST_MEMBERS, ...CHAT_DROPPED_PARAMETERS, 'functions', 'function_call', 'moderation']);

/** The allowed_tools subset of a tool_choice (its mode is kept): named `tool_choice.tools`. */
function droppedToolSubset(body: unknown): string[] {
  const choice = body !== null && typeof body === 'object' ? (body as { tool_choice?: unknown }).tool_choice : undefined;
  return choice !== null && typeof choice === 'object' && (choice as { type?: unknown }).type === 'allowed_tools' ? ['tool_choice.tools'] : [];
}

export const chatCodec: InboundCodec = {
  shape: 'openai.chat',
  droppedParameters: (body) => [...presentParameters(body, CHAT_DROPPED_PARAMETERS), ...droppedToolSubset(body), ...unknownParameters(body, CHAT_KNOWN)],
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  streamEncoder: chatStreamEncoder,
  renderError: renderOpenAIError,
  fastMode: priorityTier,
};
