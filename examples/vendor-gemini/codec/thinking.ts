// Canonical reasoning -> Gemini generationConfig.thinkingConfig.
//   budget_tokens wins; otherwise the effort maps to a thinkingBudget (below); effort `none`
//   is thinkingBudget 0 (thinking off where the model allows it); reasoning with neither is
//   thinkingBudget -1 (dynamic). `summary: true` asks for thought summaries (includeThoughts).
// Gemini 3's thinkingLevel is not sent: those models still accept thinkingBudget, and sending
// both is an error.
import type { CanonicalRequest } from 'relay-gateway/canonical';

type ReasoningEffort = NonNullable<NonNullable<CanonicalRequest['reasoning']>['effort']>;

export const EFFORT_BUDGETS: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
};

export interface ThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export function thinkingConfigFor(request: CanonicalRequest): ThinkingConfig | undefined {
  const r = request.reasoning;
  if (!r) return undefined;
  const budget = r.budget_tokens ?? (r.effort === undefined ? -1 : EFFORT_BUDGETS[r.effort]);
  const config: ThinkingConfig = { thinkingBudget: budget };
  if (r.summary === true && budget !== 0) config.includeThoughts = true;
  return config;
}
