// The InboundCodec of OpenAI Responses ('openai.responses'), used by /vendor-a and /agent-a.
import type { InboundCodec } from '../../../core/plugin-api.ts';
import type { ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { presentParameters, unknownParameters } from '../../../core/plugin-api/canonical.ts';
import { renderOpenAIError } from './errors.ts';
import { priorityTier } from './fast-mode.ts';
import { refuseBackground } from './background.ts';
import { checkStoreFlag } from './store-flag.ts';
import { RESPONSES_REQUEST_MEMBERS, WEB_SEARCH_TOOL_TYPES, decodeResponsesRequest } from './responses-request.ts';
import { encodeResponsesResponse } from './responses-response.ts';
import { responsesStreamEncoder } from './responses-stream.ts';
import { responsesConversationState } from './responses-state.ts';
import { responsesOwnership } from './forwarded-owners.ts';
import { withoutForeignItems } from './foreign-items.ts';

/** Top-level parameters translation drops (listed in the plugin README); a response names them in x-relay-dropped. */
export const RESPONSES_DROPPED_PARAMETERS = [
  'store', 'include', 'service_tier', 'truncation', 'background', 'prompt_cache_key', 'text.verbosity', 'top_logprobs', 'max_tool_calls', 'client_metadata',
  'prompt_cache_options', 'prompt_cache_retention', 'context_management', 'stream_options',
] as const;
/** What is read, named, resolved from Relay's state or refused; any other member is named as unknown. */
const RESPONSES_KNOWN = new Set<string>([
  ...RESPONSES_REQUEST_MEMBERS, ...RESPONSES_DROPPED_PARAMETERS.filter((p) => !p.includes('.')), 'previous_response_id', 'conversation', 'prompt', 'moderation',
]);
/** Every drop of a body: the parameters present of `dropped`, server-side tools and items, unknown members. */
const droppedOf = (dropped: readonly string[]) => (body: unknown): string[] =>
  [...presentParameters(body, dropped), ...droppedServerSide(body), ...unknownParameters(body, RESPONSES_KNOWN)];

const TRANSLATED_TOOLS = new Set(['function', 'custom', 'namespace', ...WEB_SEARCH_TOOL_TYPES]);
const TRANSLATED_ITEMS = new Set(['message', 'function_call', 'custom_tool_call', 'function_call_output', 'custom_tool_call_output', 'reasoning', 'item_reference', 'web_search_call']);
/** Fields of a web search tool with no canonical form. */
const WEB_SEARCH_UNMAPPED = ['external_web_access', 'search_content_types'];

/**
 * Server-side tools and their history items, which run inside OpenAI: named as `tools.<type>` and
 * `input.<type>` (web search is translated; its fields without a canonical form are named); a tool_choice naming one is `tool_choice`, an allowed_tools subset `tool_choice.tools`.
 */
export function droppedServerSide(body: unknown): string[] {
  const b = (body !== null && typeof body === 'object' ? body : {}) as { tools?: unknown; input?: unknown; tool_choice?: unknown };
  const typeOf = (v: unknown): string | null => (v !== null && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string' ? (v as { type: string }).type : null);
  const names = new Set<string>();
  for (const tool of Array.isArray(b.tools) ? b.tools : []) {
    const type = typeOf(tool);
    if (type && !TRANSLATED_TOOLS.has(type)) names.add(`tools.${type}`);
    if (type && WEB_SEARCH_TOOL_TYPES.has(type)) {
      for (const field of WEB_SEARCH_UNMAPPED) if ((tool as Record<string, unknown>)[field] !== undefined) names.add(`tools.web_search.${field}`);
    }
  }
  for (const item of Array.isArray(b.input) ? b.input : []) {
    const type = typeOf(item);
    if (type && !TRANSLATED_ITEMS.has(type)) names.add(`input.${type}`);
  }
  const choice = typeOf(b.tool_choice);
  if (choice === 'allowed_tools') names.add('tool_choice.tools');
  else if (choice && choice !== 'function' && choice !== 'custom') names.add('tool_choice');
  return [...names];
}

export const responsesCodec: InboundCodec = {
  shape: 'openai.responses',
  droppedParameters: droppedOf(RESPONSES_DROPPED_PARAMETERS),
  decodeRequest: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  streamEncoder: responsesStreamEncoder,
  renderError: renderOpenAIError,
  passthroughBody: withoutForeignItems,
  fastMode: priorityTier,
  checkPassthrough: (request) => {
    refuseBackground(request);
    checkStoreFlag(request);
  },
};

/** The codec with Relay's Responses state: references resolve, `store` is honoured (so not dropped). */
export function statefulResponsesCodec(state: ResponsesState): InboundCodec {
  const dropped = state.enabled ? RESPONSES_DROPPED_PARAMETERS.filter((p) => p !== 'store') : RESPONSES_DROPPED_PARAMETERS;
  return { ...responsesCodec, droppedParameters: droppedOf(dropped), state: responsesConversationState(state), ownership: responsesOwnership(state) };
}
