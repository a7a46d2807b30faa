// Bedrock Converse response JSON -> canonical response. Converse gives no response id: one is made.
// Blocks other than text, toolUse and reasoning are mapped or named in x-relay-dropped (answer-parts.ts).
import { randomUUID } from 'node:crypto';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { customToolNames, emptyUsage, toolArgumentsText, unwrapCustomInput, type CanonicalRequest, type CanonicalResponse, type ContentPart } from '../../../core/plugin-api/canonical.ts';
import { citedText, imageOfBlock, nameBlock, TOOL_INPUT_NAME } from './answer-parts.ts';
import { BEDROCK_ORIGIN } from './converse-request.ts';
import { stopReasonFromConverse, stopSequenceOf } from './stop-reason.ts';
import { usageFromConverse } from './usage.ts';
import type { ConverseBlock, ConverseResponse } from './wire.ts';

export function newResponseId(): string {
  return `msg_bdrk_${randomUUID().replace(/-/g, '')}`;
}

/**
 * A toolUse's input as canonical arguments: JSON for function tools (a string is that JSON already),
 * the raw text for custom ones; an input that is neither text nor an object is named and read as none.
 */
export function argumentsOf(name: string, input: unknown, custom: ReadonlySet<string>, dropped: string[]): { arguments: string; tool_kind: 'function' | 'custom' } {
  const text = toolArgumentsText(input, dropped, TOOL_INPUT_NAME);
  // No input ('' here, an empty buffer streamed) unwraps to '' on both: a custom input is free text.
  if (custom.has(name)) return { arguments: unwrapCustomInput(text), tool_kind: 'custom' };
  return { arguments: text || '{}', tool_kind: 'function' };
}

function partOf(b: ConverseBlock, custom: ReadonlySet<string>, dropped: string[]): ContentPart | null {
  if (typeof b.text === 'string') return { type: 'text', text: b.text };
  if (b.toolUse) {
    const name = String(b.toolUse.name ?? '');
    return { type: 'tool_call', id: String(b.toolUse.toolUseId ?? ''), name, ...argumentsOf(name, b.toolUse.input, custom, dropped) };
  }
  const reasoning = b.reasoningContent;
  if (reasoning?.reasoningText) {
    const { text, signature } = reasoning.reasoningText;
    return {
      type: 'reasoning', origin: BEDROCK_ORIGIN,
      ...(typeof text === 'string' && text !== '' ? { text } : {}),
      ...(typeof signature === 'string' && signature !== '' ? { signature } : {}),
    };
  }
  if (typeof reasoning?.redactedContent === 'string') return { type: 'reasoning', origin: BEDROCK_ORIGIN, encrypted: reasoning.redactedContent };
  const image = imageOfBlock(b.image);
  if (image) return image;
  if (b.citationsContent) return citedText(b.citationsContent, dropped);
  nameBlock(b, dropped);
  return null;
}

export function decodeConverseResponse(body: unknown, route: Route, request?: CanonicalRequest, dropped: string[] = []): CanonicalResponse {
  const json = (body ?? {}) as ConverseResponse;
  const content = json.output?.message?.content;
  if (!Array.isArray(content)) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream answer has no output.message.content array');
  const custom = customToolNames(request);
  const out: CanonicalResponse = {
    id: newResponseId(),
    model: route.upstreamModel,
    content: content.map((b) => partOf(b, custom, dropped)).filter((p): p is ContentPart => p !== null),
    stop_reason: stopReasonFromConverse(json.stopReason),
    usage: usageFromConverse(json.usage) ?? emptyUsage(),
  };
  const stopSequence = stopSequenceOf(json.additionalModelResponseFields);
  if (stopSequence !== undefined) out.stop_sequence = stopSequence;
  return out;
}
