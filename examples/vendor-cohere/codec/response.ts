// Cohere v2 chat answer -> canonical response: text -> text, thinking -> reasoning (origin
// cohere), tool_calls -> tool calls (Cohere's ids kept). tool_plan (the model's note on what it
// will call) is reasoning too; citations are dropped.
import { randomBytes } from 'node:crypto';
import { RelayError, type Route } from 'relay-gateway';
import { customToolNames, emptyUsage, type CanonicalRequest, type CanonicalResponse, type ContentPart } from 'relay-gateway/canonical';
import { stopReasonFromCohere } from './finish-reason.ts';
import { argumentsOf } from './tool-arguments.ts';
import { usageFromCohere } from './usage.ts';
import type { CohereResponse } from './wire.ts';

export const COHERE_ORIGIN = 'cohere';

export function newResponseId(): string {
  return `cohere_${randomBytes(12).toString('base64url')}`;
}

export function decodeCohereResponse(body: unknown, route: Route, request: CanonicalRequest): CanonicalResponse {
  if (body === null || typeof body !== 'object') throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream answer is not a JSON object');
  const json = body as CohereResponse;
  if (!json.message) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream answer has no message');
  const custom = customToolNames(request);
  const content: ContentPart[] = [];
  if (json.message.tool_plan) content.push({ type: 'reasoning', origin: COHERE_ORIGIN, text: json.message.tool_plan });
  for (const c of json.message.content ?? []) {
    if (c.type === 'thinking' && typeof c.thinking === 'string') content.push({ type: 'reasoning', origin: COHERE_ORIGIN, text: c.thinking });
    if (c.type === 'text' && typeof c.text === 'string' && c.text !== '') content.push({ type: 'text', text: c.text });
  }
  for (const call of json.message.tool_calls ?? []) {
    const name = call.function?.name ?? '';
    content.push({ type: 'tool_call', id: call.id ?? newResponseId(), name, ...argumentsOf(name, call.function?.arguments, custom) });
  }
  return {
    id: json.id ?? newResponseId(),
    model: route.upstreamModel,
    content,
    stop_reason: stopReasonFromCohere(json.finish_reason, content.some((p) => p.type === 'tool_call')),
    usage: usageFromCohere(json.usage) ?? emptyUsage(),
  };
}
