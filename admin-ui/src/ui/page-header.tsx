// The title row of a page: title, an optional line of explanation, actions on the right.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

export function PageHeader({ title, subtitle, actions, back }: { title: string; subtitle?: ComponentChildren; actions?: ComponentChildren; back?: ComponentChildren }) {
  useEffect(() => { document.title = `${title} · Relay`; }, [title]);
  return (
    <header class="page-header">
      <div class="page-header-text">
        {back && <div class="page-back">{back}</div>}
        <h1>{title}</h1>
        {subtitle && <p class="page-subtitle">{subtitle}</p>}
      </div>
      {actions && <div class="page-actions">{actions}</div>}
    </header>
  );
}
