// Cohere usage -> canonical. `tokens` counts what the model read and wrote; `billed_units`
// (what the bill counts, without the prompt template) is the fallback when `tokens` is absent.
// `cached_tokens` are prompt tokens read from Cohere's cache (already within the input count).
import type { Usage } from 'relay-gateway/canonical';
import type { CohereUsage } from './wire.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

export function usageFromCohere(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as CohereUsage;
  const counts = u.tokens ?? u.billed_units ?? {};
  return {
    input_tokens: count(counts.input_tokens),
    output_tokens: count(counts.output_tokens),
    cache_read_tokens: count(u.cached_tokens),
    cache_write_tokens: 0,
    reasoning_tokens: 0,
  };
}
