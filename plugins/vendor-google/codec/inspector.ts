// Classifies Gemini SSE frames for the passthrough tap and reads their usage: a frame with an
// `error` is `error`, a frame with a candidate part is `output`, a frame without one that ends the
// answer for safety (a filtered finishReason, or promptFeedback.blockReason) is `content_filter`,
// anything else (usage only) is `opening`. usageMetadata is cumulative: the last one wins.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import type { Usage } from '../../../core/plugin-api/canonical.ts';
import { stopReasonFromGemini } from './finish-reason.ts';
import { usageFromGemini } from './usage.ts';
import type { GeminiResponse } from './wire.ts';

export function geminiStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  return {
    inspect(_event, data) {
      let frame: GeminiResponse;
      try {
        frame = JSON.parse(data) as GeminiResponse;
      } catch {
        return 'output';
      }
      if (frame.error) return 'error';
      if (frame.usageMetadata) usage = usageFromGemini(frame.usageMetadata);
      const candidate = frame.candidates?.[0];
      if ((candidate?.content?.parts?.length ?? 0) > 0) return 'output';
      const blocked = frame.promptFeedback?.blockReason;
      if ((candidate?.finishReason || blocked) && stopReasonFromGemini(candidate?.finishReason, false, blocked) === 'content_filter') return 'content_filter';
      return 'opening';
    },
    usage: () => usage,
  };
}
