// How budgets read: the window in words, spent of limit, and the fraction as a meter's tone.
import type { BudgetStatus, BudgetWindow } from '../api/types.ts';
import { formatCompact, formatCost } from '../format.ts';
import type { Tone } from '../ui/badge.tsx';

export function windowText(window: BudgetWindow): string {
  return typeof window === 'object' ? `last ${window.rollingDays} days` : window;
}

export function spentText(s: BudgetStatus): string {
  const parts: string[] = [];
  if (s.limitAmount !== null) parts.push(`${formatCost(s.spentAmount, s.currency)} of ${formatCost(s.limitAmount, s.currency)}`);
  if (s.limitTokens !== null) parts.push(`${formatCompact(s.spentTokens)} of ${formatCompact(s.limitTokens)} tokens`);
  return parts.join(' · ');
}

export function fractionTone(fraction: number): Tone {
  return fraction >= 1 ? 'red' : fraction >= 0.8 ? 'amber' : 'green';
}

export const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;
