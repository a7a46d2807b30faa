// Gemini streamGenerateContent?alt=sse frames -> canonical stream events.
//
// Every frame is a whole GenerateContentResponse whose parts are new (not cumulative): text
// continues the open text part, thought text the open reasoning part; a different kind closes
// the open part and opens the next one. A functionCall arrives whole: part_start, one
// arguments delta, part_end. A thoughtSignature becomes a reasoning part of its own holding
// only the signature, before the part it came on. Code execution parts (executableCode,
// codeExecutionResult) are each a text part of their own (answer-parts.ts); no stream event
// carries an image, so inlineData and fileData are named in `dropped` (`image` when they hold
// one; the JSON answer maps images to image parts). usageMetadata is cumulative (the last one
// wins). Gemini sends no end-of-stream frame: its last frame carries the finishReason (or a
// promptFeedback.blockReason) with the final usageMetadata, so the end event is emitted on
// that frame (the pipeline reads the usage it records from the decoded events); frames after
// it are ignored, and a body that ends without one is an error. A frame {"error": {...}} is
// an in-stream error.
import { ERROR_CODES, type ErrorCode, type Route, type StreamDecoder } from '../../../core/plugin-api.ts';
import { customToolNames, emptyUsage, parseFrame, type CanonicalRequest, type StreamEvent, type Usage } from '../../../core/plugin-api/canonical.ts';
import { codeExecutionText, imageOfDataPart, thoughtText } from './answer-parts.ts';
import { codeForGeminiError } from './errors.ts';
import { stopReasonFromGemini } from './finish-reason.ts';
import { GEMINI_ORIGIN } from './request.ts';
import { newResponseId, newToolCallId } from './response.ts';
import { argumentsOf } from './tool-arguments.ts';
import { usageFromGemini } from './usage.ts';
import type { GeminiPart, GeminiResponse } from './wire.ts';

type OpenKind = 'text' | 'reasoning';

export function geminiStreamDecoder(route: Route, request: CanonicalRequest, dropped: string[] = []): StreamDecoder {
  const custom = customToolNames(request);
  let started = false;
  let ended = false;
  let next = 0;
  let open: { kind: OpenKind; index: number } | null = null;
  let finishReason: string | undefined;
  let blockReason: string | undefined;
  let sawToolCall = false;
  let usage: Usage | null = null;

  const start = (frame?: GeminiResponse): StreamEvent[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', id: typeof frame?.responseId === 'string' ? frame.responseId : newResponseId(), model: typeof frame?.modelVersion === 'string' ? frame.modelVersion : route.upstreamModel }];
  };
  const close = (): StreamEvent[] => {
    if (!open) return [];
    const event: StreamEvent = { type: 'part_end', index: open.index };
    open = null;
    return [event];
  };
  const openPart = (kind: OpenKind): StreamEvent[] => {
    const out = close();
    const index = next++;
    open = { kind, index };
    out.push({ type: 'part_start', index, part: kind === 'text' ? { type: 'text' } : { type: 'reasoning', origin: GEMINI_ORIGIN } });
    return out;
  };
  const signaturePart = (signature: string): StreamEvent[] => {
    const out = openPart('reasoning');
    out.push({ type: 'delta', index: next - 1, delta: { type: 'signature', signature } }, ...close());
    return out;
  };

  const decodePart = (part: GeminiPart): StreamEvent[] => {
    const out: StreamEvent[] = [];
    if (part.thought === true) {
      if (imageOfDataPart(part, dropped)) dropped.push('reasoning.image');
      if (open?.kind !== 'reasoning') out.push(...openPart('reasoning'));
      const index = open!.index;
      const text = thoughtText(part, true);
      if (text !== null) out.push({ type: 'delta', index, delta: { type: 'reasoning', text } });
      if (part.thoughtSignature) out.push({ type: 'delta', index, delta: { type: 'signature', signature: part.thoughtSignature } });
      return out;
    }
    if (part.thoughtSignature) out.push(...signaturePart(part.thoughtSignature));
    if (typeof part.text === 'string' && part.text !== '') {
      if (open?.kind !== 'text') out.push(...openPart('text'));
      out.push({ type: 'delta', index: open!.index, delta: { type: 'text', text: part.text } });
    }
    if (part.functionCall) {
      out.push(...close());
      sawToolCall = true;
      const name = part.functionCall.name ?? '';
      const { arguments: args, tool_kind } = argumentsOf(name, part.functionCall.args, custom, dropped);
      const index = next++;
      out.push({ type: 'part_start', index, part: { type: 'tool_call', id: part.functionCall.id || newToolCallId(), name, tool_kind } });
      if (args !== '') out.push({ type: 'delta', index, delta: { type: 'arguments', text: args } });
      out.push({ type: 'part_end', index });
    }
    if (part.inlineData || part.fileData) {
      if (imageOfDataPart(part, dropped)) dropped.push('image');
      // The text on either side of it stays two parts, as in the JSON answer.
      out.push(...close());
    }
    const code = codeExecutionText(part);
    if (code !== null) {
      // A part of its own: the text after it opens the next one (no run-on into the fence).
      out.push(...openPart('text'), { type: 'delta', index: open!.index, delta: { type: 'text', text: code } }, ...close());
    }
    return out;
  };

  const failure = (code: ErrorCode, message: string): StreamEvent[] => {
    ended = true;
    const def = ERROR_CODES[code];
    return [...close(), { type: 'error', error: { type: def.type, code, status: def.status, message } }];
  };

  return {
    decode(_event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      const frame = parseFrame<GeminiResponse>(data);
      if (frame === null) return [];
      if (frame.error) {
        return failure(codeForGeminiError(frame.error, frame.error.code ?? 500), frame.error.message ?? 'the upstream reported an error');
      }
      const out = start(frame);
      const candidate = frame.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) out.push(...decodePart(part));
      if (candidate?.finishReason) finishReason = candidate.finishReason;
      if (frame.promptFeedback?.blockReason) blockReason = frame.promptFeedback.blockReason;
      if (frame.usageMetadata) usage = usageFromGemini(frame.usageMetadata);
      if (finishReason !== undefined || blockReason !== undefined) {
        ended = true;
        out.push(...close(), { type: 'end', stop_reason: stopReasonFromGemini(finishReason, sawToolCall, blockReason), usage: usage ?? emptyUsage() });
      }
      return out;
    },
    // usageMetadata is cumulative: the last one seen is what the upstream reported so far.
    usage: () => usage,
    finish(): StreamEvent[] {
      if (ended) return [];
      return [...start(), ...failure('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream stream ended before a finishReason')];
    },
  };
}
