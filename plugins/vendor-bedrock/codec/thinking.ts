// Canonical reasoning -> Claude's extended thinking on Bedrock (additionalModelRequestFields),
// with the same budgets as the Anthropic adapter: minimal 1024, low 4096, medium 16384,
// high 32768, xhigh 65536; an explicit budget_tokens wins; reasoning with neither is
// adaptive, only for a model the catalog marks as reasoning (Codex asks on every request).
// Claude needs 1024 <= budget < maxTokens; with thinking and no client limit maxTokens is the
// budget plus 4096, at most the model's maxOutputTokens or 64,000.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';

export const EFFORT_BUDGETS = { minimal: 1024, low: 4096, medium: 16384, high: 32768, xhigh: 65536 } as const;
const ANSWER_TOKENS = 4096;
const MIN_BUDGET = 1024;
const MAX_DERIVED_MAX_TOKENS = 64_000;

export type Thinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' };

/** Bedrock's Claude model ids, inference profiles and ARNs name the model: anthropic.claude-..., us.anthropic.claude-... */
export function isClaudeModel(upstreamModel: string): boolean {
  return /anthropic|claude/i.test(upstreamModel);
}

/** Thinking and maxTokens (undefined: Bedrock's default for the model) for a request. */
export function thinkingFor(request: CanonicalRequest, modelLimit: number | undefined, reasoningModel: boolean): { thinking?: Thinking; maxTokens?: number } {
  const r = request.reasoning;
  const asked = request.max_output_tokens ?? modelLimit;
  if (!r || r.effort === 'none' || r.budget_tokens === 0) return { maxTokens: asked };
  const budget = r.budget_tokens ?? (r.effort === undefined ? undefined : EFFORT_BUDGETS[r.effort]);
  if (budget === undefined) return reasoningModel ? { thinking: { type: 'adaptive' }, maxTokens: asked } : { maxTokens: asked };
  const wanted = Math.max(MIN_BUDGET, budget);
  if (request.max_output_tokens === undefined) {
    const maxTokens = Math.min(wanted + ANSWER_TOKENS, modelLimit ?? MAX_DERIVED_MAX_TOKENS);
    const room = Math.min(wanted, maxTokens - ANSWER_TOKENS);
    if (room < MIN_BUDGET) return { maxTokens };
    return { thinking: { type: 'enabled', budget_tokens: room }, maxTokens };
  }
  if (request.max_output_tokens <= MIN_BUDGET) return { maxTokens: request.max_output_tokens };
  return { thinking: { type: 'enabled', budget_tokens: Math.min(wanted, request.max_output_tokens - 1) }, maxTokens: request.max_output_tokens };
}
