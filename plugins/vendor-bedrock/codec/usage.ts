// Converse usage -> canonical usage. Converse's inputTokens leaves out cache reads and writes
// (as Anthropic's input_tokens does); the canonical input_tokens counts every prompt token.
import type { Usage } from '../../../core/plugin-api/canonical.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

export function usageFromConverse(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as Record<string, unknown>;
  const cacheRead = count(u.cacheReadInputTokens);
  const cacheWrite = count(u.cacheWriteInputTokens);
  return {
    input_tokens: count(u.inputTokens) + cacheRead + cacheWrite,
    output_tokens: count(u.outputTokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: 0,
  };
}
