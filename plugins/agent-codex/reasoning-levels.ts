// Reasoning-effort options shown in Codex's picker, for models the catalog marks as reasoning.
import type { Model } from '../../core/plugin-api/catalog.ts';

export interface ReasoningLevel {
  effort: string;
  description: string;
}

/** Used when a reasoning model declares no `reasoningLevels`. */
export const DEFAULT_REASONING_LEVELS = ['low', 'medium', 'high'] as const;

const DESCRIPTIONS: Record<string, string> = {
  none: 'No reasoning',
  minimal: 'Fastest responses with very little reasoning',
  low: 'Fast responses with lighter reasoning',
  medium: 'Balances speed and reasoning depth for everyday tasks',
  high: 'Greater reasoning depth for complex problems',
  xhigh: 'Extra high reasoning depth for complex problems',
};

/** Empty for a model that is not a reasoning model. */
export function reasoningLevels(model: Model): ReasoningLevel[] {
  if (!model.spec.reasoning) return [];
  const efforts = model.spec.reasoningLevels && model.spec.reasoningLevels.length > 0 ? model.spec.reasoningLevels : DEFAULT_REASONING_LEVELS;
  return efforts.map((effort) => ({ effort, description: DESCRIPTIONS[effort] ?? `Reasoning effort ${effort}` }));
}
