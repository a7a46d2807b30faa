// Gemini usageMetadata -> canonical usage.
//   promptTokenCount already includes cachedContentTokenCount (canonical input counts every
//   prompt token, cached or not); toolUsePromptTokenCount is prompt too and is added.
//   candidatesTokenCount excludes thoughtsTokenCount; canonical output includes reasoning.
// Gemini has no prompt-cache write count: cache_write_tokens is always 0.
import type { Usage } from 'relay-gateway/canonical';
import type { GeminiUsageMetadata } from './wire.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

export function usageFromGemini(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as GeminiUsageMetadata;
  const thoughts = count(u.thoughtsTokenCount);
  return {
    input_tokens: count(u.promptTokenCount) + count(u.toolUsePromptTokenCount),
    output_tokens: count(u.candidatesTokenCount) + thoughts,
    cache_read_tokens: count(u.cachedContentTokenCount),
    cache_write_tokens: 0,
    reasoning_tokens: thoughts,
  };
}
