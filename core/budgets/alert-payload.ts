// What an alert says, in the two shapes webhooks take: Relay's JSON object (for scripts and
// generic receivers) and Slack's incoming-webhook message ({"text": ...}).
import type { Budget } from '../catalog/kinds.ts';
import type { BudgetStatus } from './budget-guard.ts';

export interface AlertFacts {
  budget: Budget;
  status: BudgetStatus;
  threshold: number;
  firedAt: string;
}

const PERIOD = { daily: 'today', weekly: 'this week', monthly: 'this month', lifetime: 'in its lifetime' } as const;

const percent = (f: number) => `${Math.round(f * 1000) / 10}%`;

function spentLine({ budget, status }: AlertFacts): string {
  const parts: string[] = [];
  if (status.limitAmount !== null) parts.push(`${status.spentAmount} of ${status.limitAmount} ${status.currency}`);
  if (status.limitTokens !== null) parts.push(`${status.spentTokens} of ${status.limitTokens} tokens`);
  const when = typeof budget.spec.window === 'object' ? `in the last ${budget.spec.window.rollingDays} days` : PERIOD[budget.spec.window];
  return `${parts.join(' and ')} spent ${when}`;
}

export function jsonAlert(facts: AlertFacts): Record<string, unknown> {
  const { budget, status } = facts;
  return {
    type: 'relay.budget.alert',
    firedAt: facts.firedAt,
    threshold: facts.threshold,
    budget: {
      id: budget.metadata.id, slug: budget.metadata.slug, displayName: budget.metadata.displayName,
      scope: budget.spec.scope ?? {}, window: budget.spec.window, timezone: budget.spec.timezone, action: budget.spec.action,
    },
    status,
    message: slackAlert(facts).text,
  };
}

export function slackAlert(facts: AlertFacts): { text: string } {
  const { budget, status, threshold } = facts;
  const refusing = status.exceeded && budget.spec.action === 'refuse';
  const resets = status.resetsAt === null ? '' : ` It resets at ${status.resetsAt}.`;
  return {
    text: `Relay budget "${budget.metadata.displayName}" (${budget.metadata.slug}) passed ${percent(threshold)} of its limit: `
      + `${spentLine(facts)} (${percent(status.fraction)}).${refusing ? ' Requests it covers are now refused.' : ''}${resets}`,
  };
}
