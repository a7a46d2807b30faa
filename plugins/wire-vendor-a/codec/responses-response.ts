// Canonical response -> OpenAI Responses response object.
import type { CanonicalResponse } from '../../../core/plugin-api/canonical.ts';
import type { EncodeContext } from '../../../core/plugin-api.ts';
import { customToolNames } from './custom-tool-calls.ts';
import { namespaceIndex } from './namespace-tools.ts';
import {
  completion, itemId, messageItem, outputText, reasoningItem, refusalContent, responseId, responseObject, responsesUsage, toolCallItem,
} from './responses-object.ts';
import { urlAnnotations, webSearchItem } from './web-search-item.ts';

/** What the Responses encoders drop from a canonical response, and why. */
export const RESPONSES_RESPONSE_DROPPED = {
  'image, document and tool_result parts in output': 'output items carry text, refusals, reasoning and tool calls (an image only as an image_generation_call, which a client replays as a server tool item); named (`image`, ...) in x-relay-dropped',
  'stop_sequence': 'Responses has no stop sequences',
} as const;

export function encodeResponsesResponse(response: CanonicalResponse, ctx: EncodeContext): unknown {
  const id = responseId(ctx.requestId);
  const custom = customToolNames(ctx.request);
  const namespaces = namespaceIndex(ctx.inbound);
  const output: Record<string, unknown>[] = [];
  let message: unknown[] | null = null;
  for (const part of response.content) {
    if (part.type === 'text' || part.type === 'refusal') {
      if (message === null) {
        message = [];
        output.push(messageItem(itemId('msg', id, output.length), message, 'completed'));
      }
      message.push(part.type === 'text' ? outputText(part.text, urlAnnotations(part.text, part.citations)) : refusalContent(part.text));
      continue;
    }
    message = null;
    if (part.type === 'reasoning') output.push(reasoningItem(itemId('rs', id, output.length), part, true));
    else if (part.type === 'web_search_call') output.push(webSearchItem(part));
    else if (part.type === 'tool_call') {
      output.push(toolCallItem(id, output.length, { callId: part.id, name: part.name, arguments: part.arguments, toolKind: part.tool_kind }, custom, namespaces, 'completed'));
    } else ctx.dropped?.push(part.type);
  }
  const { status, incomplete_details } = completion(response.stop_reason);
  const createdAt = Math.floor(Date.now() / 1000);
  const object = responseObject(ctx, id, createdAt, status);
  if (status === 'completed') object.completed_at = createdAt;
  object.incomplete_details = incomplete_details;
  if (status === 'failed') object.error = { code: 'server_error', message: 'the upstream reported an error' };
  object.output = output;
  object.usage = responsesUsage(response.usage);
  return object;
}
