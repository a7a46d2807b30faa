// Classifies Gemini SSE frames for the passthrough tap and reads their usage: a frame with an
// `error` is `error`, a frame with a candidate part is `output`, anything else (usage or
// prompt feedback only) is `opening`. usageMetadata is cumulative: the last one wins.
import type { StreamInspector } from 'relay-gateway';
import type { Usage } from 'relay-gateway/canonical';
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
      return (frame.candidates?.[0]?.content?.parts?.length ?? 0) > 0 ? 'output' : 'opening';
    },
    usage: () => usage,
  };
}
