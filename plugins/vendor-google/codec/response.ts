// Gemini generateContent response JSON -> canonical response (the first candidate).
//   text -> text; thought text -> reasoning (origin gemini); a thoughtSignature -> a reasoning
//   part carrying only the signature, placed before the part it came on; functionCall ->
//   tool_call (id from Gemini when it sent one, else made up); an image (inlineData or fileData)
//   -> an image part, other inline or file data named in x-relay-dropped; executableCode and
//   codeExecutionResult -> text (answer-parts.ts).
import { randomBytes } from 'node:crypto';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { customToolNames, emptyUsage, type CanonicalRequest, type CanonicalResponse, type ContentPart } from '../../../core/plugin-api/canonical.ts';
import { codeExecutionText, imageOfDataPart, thoughtText } from './answer-parts.ts';
import { stopReasonFromGemini } from './finish-reason.ts';
import { GEMINI_ORIGIN } from './request.ts';
import { argumentsOf } from './tool-arguments.ts';
import { usageFromGemini } from './usage.ts';
import type { GeminiPart, GeminiResponse } from './wire.ts';

export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}

export function newResponseId(): string {
  return `gemini_${randomBytes(12).toString('base64url')}`;
}

/** Canonical parts of one Gemini part (a signature becomes its own reasoning part first). */
export function partsOfGeminiPart(part: GeminiPart, customTools: ReadonlySet<string>, dropped: string[] = []): ContentPart[] {
  const out: ContentPart[] = [];
  if (part.thought === true) {
    if (imageOfDataPart(part, dropped)) dropped.push('reasoning.image');
    const text = thoughtText(part);
    out.push({
      type: 'reasoning', origin: GEMINI_ORIGIN,
      ...(text !== null ? { text } : {}),
      ...(part.thoughtSignature ? { signature: part.thoughtSignature } : {}),
    });
    return out;
  }
  if (part.thoughtSignature) out.push({ type: 'reasoning', origin: GEMINI_ORIGIN, signature: part.thoughtSignature });
  if (typeof part.text === 'string' && part.text !== '') out.push({ type: 'text', text: part.text });
  if (part.functionCall) {
    const name = part.functionCall.name ?? '';
    out.push({ type: 'tool_call', id: part.functionCall.id || newToolCallId(), name, ...argumentsOf(name, part.functionCall.args, customTools, dropped) });
  }
  const image = imageOfDataPart(part, dropped);
  if (image) out.push(image);
  const code = codeExecutionText(part);
  if (code !== null) out.push({ type: 'text', text: code });
  return out;
}

export function decodeGeminiResponse(body: unknown, route: Route, request: CanonicalRequest, dropped: string[] = []): CanonicalResponse {
  if (body === null || typeof body !== 'object') throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream answer is not a JSON object');
  const json = body as GeminiResponse;
  const candidate = json.candidates?.[0];
  if (!candidate && !json.promptFeedback?.blockReason) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream answer has no candidate');
  const custom = customToolNames(request);
  const content = (candidate?.content?.parts ?? []).flatMap((p) => partsOfGeminiPart(p, custom, dropped));
  return {
    id: typeof json.responseId === 'string' ? json.responseId : newResponseId(),
    model: typeof json.modelVersion === 'string' ? json.modelVersion : route.upstreamModel,
    content,
    stop_reason: stopReasonFromGemini(candidate?.finishReason, content.some((p) => p.type === 'tool_call'), json.promptFeedback?.blockReason),
    usage: usageFromGemini(json.usageMetadata) ?? emptyUsage(),
  };
}
