// Gemini usageMetadata -> canonical usage.
//   promptTokenCount already includes cachedContentTokenCount (canonical input counts every
//   prompt token, cached or not); toolUsePromptTokenCount is prompt too and is added.
//   candidatesTokenCount excludes thoughtsTokenCount; canonical output includes reasoning.
// Gemini has no prompt-cache write count: cache_write_tokens is always 0.
import { tokenCount, type Usage } from '../../../core/plugin-api/canonical.ts';
import type { GeminiUsageMetadata } from './wire.ts';


export function usageFromGemini(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as GeminiUsageMetadata;
  const thoughts = tokenCount(u.thoughtsTokenCount);
  return {
    input_tokens: tokenCount(tokenCount(u.promptTokenCount) + tokenCount(u.toolUsePromptTokenCount)),
    output_tokens: tokenCount(tokenCount(u.candidatesTokenCount) + thoughts),
    cache_read_tokens: tokenCount(u.cachedContentTokenCount),
    cache_write_tokens: 0,
    reasoning_tokens: thoughts,
  };
}
