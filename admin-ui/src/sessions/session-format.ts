// How a session's figures read: its duration in the largest fitting units, its cache hit ratio as
// a percentage, and its models as one line.
import type { SessionSummary } from '../api/types.ts';

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
