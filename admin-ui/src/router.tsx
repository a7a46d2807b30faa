// A small history-API router: real paths (deep links work because the server answers every
// unknown GET with index.html), <Link> for in-app navigation, and path patterns like
// /logs/:requestId. Written by hand because it is ~60 lines and needs no server rendering.
import { createContext, type ComponentChildren, type TargetedMouseEvent } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

interface Location {
  path: string;
  query: URLSearchParams;
}

const LocationContext = createContext<Location>({ path: '/', query: new URLSearchParams() });

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const here = window.location.pathname + window.location.search;
  if (to === here) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
  if (!opts.replace) window.scrollTo(0, 0);
}

export function LocationProvider({ children }: { children: ComponentChildren }) {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return <LocationContext.Provider value={location}>{children}</LocationContext.Provider>;
}

export function useLocation(): Location {
  return useContext(LocationContext);
}

/** Matches `/logs/:id` against a path; returns the params or null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

interface LinkProps {
  href: string;
  class?: string;
  title?: string;
  children?: ComponentChildren;
  'aria-current'?: 'page';
  onClick?: (event: TargetedMouseEvent<HTMLAnchorElement>) => void;
}

export function Link({ href, onClick, ...rest }: LinkProps) {
  const handle = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={handle} {...rest} />;
}

/** Replaces the query string of the current path (filters that belong in the URL). */
export function setQuery(values: Record<string, string | undefined>, opts: { replace?: boolean } = { replace: true }): void {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === '') params.delete(key);
    else params.set(key, value);
  }
  const qs = params.toString();
  navigate(window.location.pathname + (qs ? `?${qs}` : ''), opts);
}
