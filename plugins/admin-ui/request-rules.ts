// Which requests the dashboard answers. The control listener's root is shared with the API,
// so these rules keep the SPA fallback from ever shadowing an API route.

/** What to do with a GET on the control listener that no other route matched. */
export type DashboardAnswer =
  /** Not ours: /api/*, /config.json, /metrics, bad paths, missing hashed assets. Falls through to the JSON 404. */
  | { kind: 'not-found' }
  /** A file of the build, relative to its root. */
  | { kind: 'file'; file: string }
  /** A client-side route (a deep link): answer with index.html. */
  | { kind: 'app' };

const RESERVED_EXACT = new Set(['/api', '/config.json', '/metrics']);

export function isReservedPath(pathname: string): boolean {
  return RESERVED_EXACT.has(pathname) || pathname.startsWith('/api/');
}

/** Decodes and normalises a URL pathname; null when it is not a safe path. */
export function safePathname(url: string): string | null {
  const raw = url.split('?')[0].split('#')[0];
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (!decoded.startsWith('/') || decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/');
  if (segments.some((s) => s === '..' || s === '.')) return null;
  return decoded.replace(/\/{2,}/g, '/');
}

/**
 * Decides the answer for a path, given whether the build holds a file at that path.
 * Hashed assets (/assets/...) that are missing are a 404, not the app: a stale page asking
 * for an old bundle must fail visibly instead of parsing HTML as JavaScript.
 */
export function answerFor(pathname: string | null, isFile: (relative: string) => boolean): DashboardAnswer {
  if (pathname === null) return { kind: 'not-found' };
  const lower = pathname.toLowerCase();
  if (isReservedPath(lower)) return { kind: 'not-found' };
  const relative = pathname.replace(/^\/+/, '');
  if (relative !== '' && !relative.endsWith('/') && isFile(relative)) return { kind: 'file', file: relative };
  if (lower.startsWith('/assets/')) return { kind: 'not-found' };
  return { kind: 'app' };
}
