// How a session's figures read: its duration in the largest fitting units, its cache hit ratio as
// a percentage, its models as one line, and its cost in its currency or in each of its currencies.
import type { SessionSummary } from '../api/types.ts';
import { formatCost } from '../format.ts';

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function formatRatio(ratio: number | null): string {
  return ratio === null ? '—' : `${(ratio * 100).toFixed(1)}%`;
}

/** The models, the first two named and the rest counted. */
export function modelsLine(session: Pick<SessionSummary, 'models'>): string {
  const { models } = session;
  if (models.length === 0) return '—';
  return models.length <= 2 ? models.join(', ') : `${models.slice(0, 2).join(', ')} +${models.length - 2}`;
}

/** The cost in the session's currency, or in each of its currencies; a sum over several is no amount: without the split it names them instead. */
export function sessionCost(session: Pick<SessionSummary, 'currencies' | 'totals' | 'costs'>): string {
  const { currencies, costs } = session;
  if (costs) return costs.map((c) => formatCost(c.cost, c.currency)).join(' · ');
  return currencies.length > 1 ? `mixed (${currencies.join(', ')})` : formatCost(session.totals.cost, currencies[0]);
}

/** Whether the sessions listed are priced in more than one currency: the API then orders "costliest" by tokens. */
export function pricedInSeveralCurrencies(sessions: ReadonlyArray<Pick<SessionSummary, 'currencies'>>): boolean {
  return new Set(sessions.flatMap((s) => s.currencies)).size > 1;
}
