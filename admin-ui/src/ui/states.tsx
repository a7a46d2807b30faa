// Loading, error and empty states, so every page looks the same while it waits or fails.
import type { ComponentChildren } from 'preact';
import { errorMessage } from '../api/client.ts';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div class="banner banner-error" role="alert">
      <span>{errorMessage(error)}</span>
      {onRetry && <button type="button" class="btn btn-small" onClick={onRetry}>Try again</button>}
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ComponentChildren; action?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <svg class="state-icon" viewBox="0 0 24 24" aria-hidden="true"><path d="M4 7h16M4 12h10M4 17h6" /></svg>
      <h3>{title}</h3>
      {children && <p>{children}</p>}
      {action && <div class="state-action">{action}</div>}
    </div>
  );
}
