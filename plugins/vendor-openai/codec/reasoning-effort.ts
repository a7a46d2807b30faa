// Canonical reasoning -> OpenAI reasoning effort. A request that carries only an Anthropic
// style budget_tokens gets the effort of the same budget table as the Anthropic codecs:
// <= 1024 minimal, <= 4096 low, <= 16384 medium, <= 32768 high, above: xhigh.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import * as canonical from '../../../core/plugin-api/canonical.ts';

export function openaiEffort(reasoning: CanonicalRequest['reasoning']): canonical.ReasoningEffort | undefined {
  if (!reasoning) return undefined;
  if (reasoning.effort !== undefined) return reasoning.effort;
  const budget = reasoning.budget_tokens;
  if (budget === undefined) return undefined;
  if (budget === 0) return 'none';
  if (budget <= 1024) return 'minimal';
  if (budget <= 4096) return 'low';
  if (budget <= 16384) return 'medium';
  if (budget <= 32768) return 'high';
  return 'xhigh';
}
