// The one place the dashboard talks HTTP: same-origin cookies, the CSRF header on every
// write, JSON in and out, and errors turned into ApiError (with the field pointer).
import type { ApiErrorBody } from './types.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** JSON pointer of the offending field, e.g. /spec/hostId. */
  readonly field?: string;

  constructor(body: ApiErrorBody) {
    super(body.message);
    this.name = 'ApiError';
    this.status = body.status;
    this.code = body.code;
    this.field = body.field;
  }
}

type Query = Record<string, string | number | undefined | null>;

/** Called when any request answers 401, so the app can show the sign-in page. */
let onUnauthenticated: () => void = () => {};
export function setUnauthenticatedHandler(fn: () => void): void {
  onUnauthenticated = fn;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function request<T>(method: string, path: string, body?: unknown, opts: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-relay-csrf'] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError({ code: 'NETWORK', message: 'Relay could not be reached. Check that the server is running.', type: 'network', status: 0 });
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: unknown = undefined;
  if (text) {
    try { json = JSON.parse(text); } catch { json = undefined; }
  }
  if (!res.ok) {
    if (res.status === 401 && !opts.quiet401) onUnauthenticated();
    const err = (json as { error?: ApiErrorBody } | undefined)?.error;
    throw new ApiError(err && typeof err.message === 'string'
      ? { ...err, status: err.status ?? res.status }
      : { code: `HTTP_${res.status}`, message: `${res.status} ${res.statusText || 'error'}`, type: 'http', status: res.status });
  }
  return json as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: (path: string) => request<void>('DELETE', path),
};

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
