// Canonical reasoning -> Anthropic extended thinking.
//
//   effort   budget_tokens
//   none     (thinking off)
//   minimal  1024
//   low      4096
//   medium   16384
//   high     32768
//   xhigh    65536
//
// An explicit canonical budget_tokens wins over the effort. Reasoning with neither is
// `{type: "adaptive"}` (the model decides). Anthropic needs 1024 <= budget < max_tokens.
// Without max_output_tokens and without thinking, max_tokens is the catalog's maxOutputTokens
// for the model, or DEFAULT_MAX_TOKENS; with thinking it becomes budget + DEFAULT_MAX_TOKENS, at most
// the model's maxOutputTokens or else MAX_DERIVED_MAX_TOKENS (64,000, the output limit of Claude's
// 4.5 models: xhigh's 65,536 + 4,096 was refused by every model), the budget shrinking to leave
// DEFAULT_MAX_TOKENS for the answer (thinking off when that leaves under 1024); with a smaller
// max_output_tokens the budget shrinks to max_tokens - 1, and below 1025
// thinking is off.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';

export const DEFAULT_MAX_TOKENS = 4096;
export const MIN_BUDGET = 1024;
export const MAX_DERIVED_MAX_TOKENS = 64_000;

export const EFFORT_BUDGETS = {
  minimal: 1024, low: 4096, medium: 16384, high: 32768, xhigh: 65536,
} as const;

export type Thinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' };

/**
 * The thinking setting and max_tokens for a request. `modelLimit` is the catalog's
 * maxOutputTokens for the model, when set: without a client limit it is the max_tokens sent
 * (and the cap on budget + DEFAULT_MAX_TOKENS), instead of DEFAULT_MAX_TOKENS (and
 * MAX_DERIVED_MAX_TOKENS).
 */
export function thinkingFor(request: CanonicalRequest, modelLimit?: number): { thinking?: Thinking; max_tokens: number } {
  const r = request.reasoning;
  const asked = request.max_output_tokens;
  const fallback = modelLimit ?? DEFAULT_MAX_TOKENS;
  if (!r || r.effort === 'none' || r.budget_tokens === 0) return { max_tokens: asked ?? fallback };
  const budget = r.budget_tokens ?? (r.effort === undefined ? undefined : EFFORT_BUDGETS[r.effort]);
  if (budget === undefined) return { thinking: { type: 'adaptive' }, max_tokens: asked ?? fallback };
  const wanted = Math.max(MIN_BUDGET, budget);
  if (asked === undefined) {
    const maxTokens = Math.min(wanted + DEFAULT_MAX_TOKENS, modelLimit ?? MAX_DERIVED_MAX_TOKENS);
    const room = Math.min(wanted, maxTokens - DEFAULT_MAX_TOKENS);
    // A model limit too small for a budget and an answer: no thinking, the whole limit for the answer.
    if (room < MIN_BUDGET) return { max_tokens: maxTokens };
    return { thinking: { type: 'enabled', budget_tokens: room }, max_tokens: maxTokens };
  }
  if (asked <= MIN_BUDGET) return { max_tokens: asked };
  return { thinking: { type: 'enabled', budget_tokens: Math.min(wanted, asked - 1) }, max_tokens: asked };
}
