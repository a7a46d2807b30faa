// The frame around every signed-in page: navigation (a drawer on narrow screens), the user, the version.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { RelayConfig, Whoami } from './api/types.ts';
import { Link, useLocation } from './router.tsx';
import { KIND_INFO, KIND_ORDER } from './catalog/kinds.ts';

function NavLink({ href, children, exact }: { href: string; children: ComponentChildren; exact?: boolean }) {
  const { path } = useLocation();
  const active = exact ? path === href : path === href || path.startsWith(`${href}/`);
  return <Link href={href} class={`nav-link${active ? ' active' : ''}`} aria-current={active ? 'page' : undefined}>{children}</Link>;
}

export function Shell({ user, config, onSignOut, children }: { user: Whoami; config: RelayConfig | null; onSignOut: () => void; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const { path } = useLocation();
  useEffect(() => { setOpen(false); }, [path]);
  return (
    <div class={`shell${open ? ' nav-open' : ''}`}>
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <button type="button" class="btn btn-icon nav-toggle" aria-expanded={open} aria-controls="sidebar" aria-label="Menu" onClick={() => setOpen(!open)}>
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path d="M4 6h16M4 12h16M4 18h16" /></svg>
        </button>
        <Link href="/" class="brand"><span class="brand-mark" aria-hidden="true">R</span><span>Relay</span></Link>
      </header>
      <nav id="sidebar" class="sidebar" aria-label="Main">
        <Link href="/" class="brand brand-side"><span class="brand-mark" aria-hidden="true">R</span><span>Relay</span></Link>
        <div class="nav-group">
          <NavLink href="/usage">Usage</NavLink>
          <NavLink href="/sessions">Sessions</NavLink>
          <NavLink href="/budgets">Budgets</NavLink>
          <NavLink href="/logs">Logs</NavLink>
        </div>
        <div class="nav-group">
          <div class="nav-heading">Catalog</div>
          {KIND_ORDER.map((k) => <NavLink key={k} href={`/catalog/${k}`}>{KIND_INFO[k].title}</NavLink>)}
        </div>
        <div class="nav-group">
          <NavLink href="/settings">Settings</NavLink>
          {(user.role ?? 'admin') === 'admin' && <NavLink href="/users">Users</NavLink>}
          {(user.role ?? 'admin') === 'admin' && <NavLink href="/audit">Audit trail</NavLink>}
          <NavLink href="/account">Account</NavLink>
        </div>
        <div class="nav-footer">
          <div class="nav-user">
            <span class="avatar" aria-hidden="true">{(user.username ?? 'A').slice(0, 1).toUpperCase()}</span>
            <span class="nav-user-name">{user.username ?? 'Admin token'}</span>
          </div>
          {user.kind === 'user' && <button type="button" class="btn btn-small btn-ghost" onClick={onSignOut}>Sign out</button>}
          {config && <div class="muted small nav-version">v{config.version}</div>}
        </div>
      </nav>
      <div class="scrim" aria-hidden="true" onClick={() => setOpen(false)} />
      <main id="main" class="content" tabIndex={-1}>{children}</main>
    </div>
  );
}
