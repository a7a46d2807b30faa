// A host key's health as the router sees it: healthy, cooling until when, circuit open or half-open, invalid, disabled.
import type { HostKeyHealth } from '../api/types.ts';
import { Badge } from '../ui/badge.tsx';
import { formatDateTime, formatRelative } from '../format.ts';

export function HealthBadge({ health }: { health: HostKeyHealth | undefined }) {
  if (!health) return <Badge tone="gray" title="No health reported yet">unknown</Badge>;
  const reason = health.reason ? ` — ${health.reason}` : '';
  switch (health.state) {
    case 'healthy':
      return <Badge tone="green">healthy</Badge>;
    case 'cooling':
      return <Badge tone="amber" title={`Cooling until ${formatDateTime(health.until)}${reason}`}>cooling{health.until ? ` · ready ${formatRelative(health.until)}` : ''}</Badge>;
    case 'open':
      return <Badge tone="amber" title={`Circuit open until ${formatDateTime(health.until)}${reason}`}>circuit open{health.until ? ` · probe ${formatRelative(health.until)}` : ''}</Badge>;
    case 'half-open':
      return <Badge tone="amber" title={`The next request probes it${reason}`}>half-open</Badge>;
    case 'invalid':
      // The server's reason starts with "missing value" when this instance cannot read the key's value.
      return <Badge tone="red" title={`Relay cannot use this key${reason}`}>{health.reason?.startsWith('missing value') ? 'missing value' : 'invalid'}</Badge>;
    case 'disabled':
      return <Badge tone="gray">disabled</Badge>;
  }
}

export function HealthDetail({ health }: { health: HostKeyHealth | undefined }) {
  return (
    <div class="health-detail">
      <HealthBadge health={health} />
      {health?.state === 'cooling' && health.until && <p>Cooling until {formatDateTime(health.until)} ({formatRelative(health.until)}). Requests use other keys meanwhile.</p>}
      {health?.state === 'open' && <p>Repeated upstream failures (5xx, timeouts, refused connections) opened the circuit of this key or its host. Requests use other keys; after {health.until ? formatDateTime(health.until) : 'a while'} one request probes it, and its success closes the circuit.</p>}
      {health?.state === 'half-open' && <p>The next request probes this key: its success closes the circuit, its failure opens it again.</p>}
      {health?.state === 'invalid' && <p>Relay cannot use this key: the upstream refused it, or its value could not be read (the reason says which). Edit the key or its value to try it again.</p>}
      {health?.reason && <p class="muted">Reason: {health.reason}</p>}
    </div>
  );
}
