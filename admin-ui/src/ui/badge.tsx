// Small coloured labels for states and statuses.
import type { ComponentChildren } from 'preact';

export type Tone = 'green' | 'amber' | 'red' | 'gray' | 'blue';

export function Badge({ tone, children, title }: { tone: Tone; children: ComponentChildren; title?: string }) {
  return <span class={`badge badge-${tone}`} title={title}>{children}</span>;
}

export function StatusBadge({ status }: { status: number }) {
  const tone: Tone = status >= 500 ? 'red' : status >= 400 ? 'amber' : status >= 200 && status < 300 ? 'green' : 'gray';
  return <Badge tone={tone}>{status}</Badge>;
}

export function EnabledBadge({ enabled }: { enabled: unknown }) {
  return enabled === false ? <Badge tone="gray">disabled</Badge> : <Badge tone="green">enabled</Badge>;
}
