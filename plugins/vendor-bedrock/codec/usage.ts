// Converse usage -> canonical usage. Converse's inputTokens leaves out cache reads and writes
// (as Anthropic's input_tokens does); the canonical input_tokens counts every prompt token.
import { tokenCount, type Usage } from '../../../core/plugin-api/canonical.ts';


export function usageFromConverse(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const cacheRead = tokenCount(u.cacheReadInputTokens);
  const cacheWrite = tokenCount(u.cacheWriteInputTokens);
  return {
    input_tokens: tokenCount(tokenCount(u.inputTokens) + cacheRead + cacheWrite),
    output_tokens: tokenCount(u.outputTokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: 0,
  };
}
