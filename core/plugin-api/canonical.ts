// relay-gateway/canonical: the provider-neutral request, response and stream events every codec
// converts to and from, with the helpers codecs share.
export * from '../canonical/types.ts';
export { estimateInputTokens } from '../canonical/input-token-estimate.ts';
export { tokenCount } from '../canonical/token-count.ts';
export { dispatchByShape, type ShapeCodec, type TranslationHooks } from '../canonical/shape-dispatch.ts';
export {
  CUSTOM_INPUT_PARAMETER, CUSTOM_INPUT_SCHEMA, customToolNames, customToolDescription, wrapCustomInput, unwrapCustomInput, toolInputObject,
} from '../canonical/custom-tools.ts';
export { unsupportedContent, unsupportedParameter } from '../canonical/unsupported-content.ts';
export { refuseUnlistedStorage, type StorageLocationRule } from '../canonical/storage-locations.ts';
export { asksReasoning } from '../canonical/asks-reasoning.ts';
export { markedToolResultContent, TOOL_ERROR_MARKER } from '../canonical/tool-result-error.ts';
export { toolArgumentsText } from '../canonical/tool-arguments-text.ts';
export { WEB_SEARCH_HISTORY_NAME, WEB_SEARCH_TOOL_NAME, functionTools, webSearchTool } from '../canonical/web-search.ts';
export { presentParameters, unknownParameters } from '../canonical/dropped-parameters.ts';
export { holdsEnvelope } from '../canonical/envelope-mark.ts';
export { holdsEscapedLetter } from '../canonical/escaped-letters.ts';
export {
  usageFromMessages, usageOfMessagesAnswer, usageToMessages, MessagesStreamUsage, messagesStreamInspector, type MessagesUsageObject, type MessagesAnswer,
} from '../canonical/messages-usage.ts';
export type { ConversationState, ExpandedRequest, ForwardPlan, ForwardedOwnership, ForwardedIdReader } from '../hooks.ts';
export type { ResponsesState, StoredResponse } from '../responses-state/types.ts';
export type { HostKeyMask } from '../pipeline/credential-scrub.ts';
export { itemIdProblem, responseIdProblem } from '../responses-state/ids.ts';
export { ledgerOwnership, parsedObject, type LedgerChecks, type NamedId } from '../responses-state/ledger-ownership.ts';
export { echoedName } from '../echoed-name.ts';
export { parseFrame } from '../canonical/stream-frame.ts';
export type { UpstreamErrorReason } from '../errors.ts';
