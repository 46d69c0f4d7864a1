import { api } from '../api/client';
import type { Role, User } from '../api/types';

export interface NewUser {
  username: string;
  password: string;
  role: Role;
  email?: string;
}

/** At least one field; `email: null` clears it. Setting a password ends that user's sessions. */
export type UserChange = { role?: Role; email?: string | null; password?: string };

const one = (id: string) => `/api/auth/users/${encodeURIComponent(id)}`;

export const listUsers = (limit: number, offset: number) => api<{ users: User[]; total: number }>('/api/auth/users', { query: { limit, offset } });
export const createUser = (user: NewUser) => api<User>('/api/auth/users', { method: 'POST', body: user });
export const updateUser = (id: string, change: UserChange) => api<User>(one(id), { method: 'PUT', body: change });
export const deleteUser = (id: string) => api<void>(one(id), { method: 'DELETE' });
export const clearTotp = (id: string) => api<void>(`${one(id)}/totp`, { method: 'DELETE' });
export const revokeSessions = (username: string) => api<{ revoked_before: string }>(`/api/admin/auth/users/${encodeURIComponent(username)}/sessions`, { method: 'DELETE' });

export const ROLES: [Role, string][] = [
  ['viewer', 'Viewer'],
  ['editor', 'Editor'],
  ['admin', 'Admin'],
];

export const ROLES_HINT = 'Viewers ask and search; editors also upload, scan and sync; admins also manage users and settings.';
