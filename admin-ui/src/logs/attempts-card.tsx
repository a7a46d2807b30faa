// A request's attempts (issue 42): each model tried and why it moved on (relay_model_attempts),
// and each upstream attempt with its host, outcome and the wait before the next (relay_attempts).
import type { LogDetail } from '../api/types.ts';

interface ModelTry {
  model: string;
  outcome?: string;
}

interface UpstreamTry {
  model: string;
  host: string;
  outcome: string;
  status?: number;
  waitMs?: number;
}

function parse<T>(text: string | undefined): T[] {
  if (!text) return [];
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value as T[] : [];
  } catch {
    return [];
  }
}

export function AttemptsCard({ log }: { log: LogDetail }) {
  const models = parse<ModelTry>(log.extras?.relay_model_attempts);
  const tries = parse<UpstreamTry>(log.extras?.relay_attempts);
  if (models.length === 0 && tries.length === 0) return null;
  return (
    <section class="card" aria-label="Attempts">
      <h2 class="card-title">Attempts</h2>
      {models.length > 0 && (
        <ol class="model-attempts">
          {models.map((m, i) => (
            <li key={i}><span class="mono">{m.model}</span> — {m.outcome ? <>moved on: <span class="mono">{m.outcome}</span></> : 'answered'}</li>
          ))}
        </ol>
      )}
      {tries.length > 0 && (
        <table class="table">
          <thead><tr><th>#</th><th>Model</th><th>Host</th><th>Outcome</th><th>Status</th><th>Wait</th></tr></thead>
          <tbody>
            {tries.map((a, i) => (
              <tr key={i}>
                <td>{i + 1}</td><td class="mono">{a.model}</td><td class="mono">{a.host}</td><td class="mono">{a.outcome}</td>
                <td>{a.status ?? '—'}</td><td>{a.waitMs === undefined ? '—' : `${a.waitMs} ms`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
