// Anthropic extended thinking budget (budget_tokens) <-> canonical reasoning effort.
//
//   effort   budget_tokens        budget_tokens range -> effort
//   minimal  1024                 <= 1024
//   low      4096                 1025 .. 4096
//   medium   16384                4097 .. 16384
//   high     32768                16385 .. 32768
//   xhigh    65536                > 32768
//
// The canonical request keeps the exact budget_tokens as well, so an Anthropic budget survives
// a round trip; the effort is what a vendor without budgets (OpenAI) receives.
// `output_config.effort` (low, medium, high, max) maps by name; max is the canonical xhigh.
import * as canonical from '../../../core/plugin-api/canonical.ts';

type Effort = canonical.ReasoningEffort;

export const EFFORT_BUDGETS: Readonly<Record<Exclude<Effort, 'none'>, number>> = {
  minimal: 1024, low: 4096, medium: 16384, high: 32768, xhigh: 65536,
};

export function effortForBudget(budget: number): Effort {
  if (budget <= EFFORT_BUDGETS.minimal) return 'minimal';
  if (budget <= EFFORT_BUDGETS.low) return 'low';
  if (budget <= EFFORT_BUDGETS.medium) return 'medium';
  if (budget <= EFFORT_BUDGETS.high) return 'high';
  return 'xhigh';
}

const OUTPUT_EFFORTS: Record<string, Effort> = { low: 'low', medium: 'medium', high: 'high', max: 'xhigh' };

export function effortFromOutputConfig(value: string): Effort | undefined {
  return OUTPUT_EFFORTS[value];
}
