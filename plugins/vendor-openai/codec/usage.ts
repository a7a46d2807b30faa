// OpenAI usage objects -> canonical usage. OpenAI's prompt/input token counts already include
// cached tokens, and output counts include reasoning tokens: the canonical convention.
import { setAnswerModel, tokenCount, type Usage } from '../../../core/plugin-api/canonical.ts';

type Json = Record<string, unknown> | null | undefined;

function object(value: unknown): Json {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null;
}

/** Chat Completions `usage` (also Embeddings, which has prompt_tokens only). */
export function usageFromChat(raw: unknown): Usage | null {
  const u = object(raw);
  if (!u) return null;
  const prompt = object(u.prompt_tokens_details);
  const completion = object(u.completion_tokens_details);
  return {
    input_tokens: tokenCount(u.prompt_tokens),
    output_tokens: tokenCount(u.completion_tokens),
    // DeepSeek reports cache hits as prompt_cache_hit_tokens (prompt_tokens includes them).
    cache_read_tokens: tokenCount(prompt?.cached_tokens ?? u.prompt_cache_hit_tokens),
    cache_write_tokens: tokenCount(prompt?.cache_write_tokens),
    reasoning_tokens: tokenCount(completion?.reasoning_tokens),
  };
}

/**
 * The service tiers OpenAI bills apart from its standard rates, by the tier an answer reports it
 * ran on (`service_tier`, which may differ from the one asked for): priority at a premium, flex at
 * the Batch rates, scale against prepaid capacity. `default` and `auto`, and other vendors' tiers
 * on this shape (Groq's `on_demand`), are the standard rates.
 */
const PRICED_TIERS: ReadonlySet<string> = new Set(['priority', 'flex', 'scale']);

/** Usage with the service tier the answer ran on as its price modifier (Usage.price_modifiers). */
export function withServiceTier(usage: Usage | null, tier: unknown): Usage | null {
  if (usage === null || typeof tier !== 'string' || !PRICED_TIERS.has(tier)) return usage;
  return { ...usage, price_modifiers: [tier] };
}

/** A Chat Completions answer's (or stream chunk's) usage, with its service tier. */
export function usageOfChatAnswer(answer: { usage?: unknown; service_tier?: unknown } | null | undefined): Usage | null {
  return withServiceTier(usageFromChat(answer?.usage), answer?.service_tier);
}

/** A stream chunk's usage: `usage`, or Groq's `x_groq.usage` on the last chunk. */
export function chunkUsage(chunk: { usage?: unknown; x_groq?: unknown }): unknown {
  return chunk.usage ?? object(chunk.x_groq)?.usage;
}

/** Responses `usage`. */
export function usageFromResponses(raw: unknown): Usage | null {
  const u = object(raw);
  if (!u) return null;
  const input = object(u.input_tokens_details);
  const output = object(u.output_tokens_details);
  return {
    input_tokens: tokenCount(u.input_tokens),
    output_tokens: tokenCount(u.output_tokens),
    cache_read_tokens: tokenCount(input?.cached_tokens),
    cache_write_tokens: tokenCount(input?.cache_write_tokens),
    reasoning_tokens: tokenCount(output?.reasoning_tokens),
  };
}

/** A response's usage with the web searches its output ran (OpenAI bills each web_search_call), its service tier and its model. */
export function usageOfResponse(response: { usage?: unknown; output?: unknown; service_tier?: unknown; model?: unknown } | null | undefined): Usage | null {
  const usage = setAnswerModel(withServiceTier(usageFromResponses(response?.usage), response?.service_tier), response?.model);
  const output = response?.output;
  const searches = Array.isArray(output) ? output.filter((item) => (item as { type?: unknown } | null)?.type === 'web_search_call').length : 0;
  return usage && searches > 0 ? { ...usage, web_search_requests: searches } : usage;
}
