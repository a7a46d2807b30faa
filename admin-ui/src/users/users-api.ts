// /api/users (admin only) and PUT /api/auth/password (one's own).
import { api } from '../api/client.ts';
import type { DashboardUser, Role } from '../api/types.ts';

export const listUsers = () => api.get<{ items: DashboardUser[] }>('/api/users').then((r) => r.items);
export const createUser = (body: { username: string; password: string; role: Role }) => api.post<DashboardUser>('/api/users', body);
export const updateUser = (username: string, change: { role?: Role; enabled?: boolean; password?: string }) =>
  api.patch<DashboardUser>(`/api/users/${encodeURIComponent(username)}`, change);
export const deleteUser = (username: string) => api.del(`/api/users/${encodeURIComponent(username)}`);
export const changeOwnPassword = (currentPassword: string, newPassword: string) => api.put<void>('/api/auth/password', { currentPassword, newPassword });
