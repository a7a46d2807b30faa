// Who is signed in, and the calls that change it.
import { api, request } from '../api/client.ts';
import type { Whoami } from '../api/types.ts';

export const whoami = () => request<Whoami>('GET', '/api/auth/whoami', undefined, { quiet401: true });

export const login = (username: string, password: string) =>
  request<{ user: { username: string } }>('POST', '/api/auth/login', { username, password }, { quiet401: true });

export const logout = () => api.post<void>('/api/auth/logout');
