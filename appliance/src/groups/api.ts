import { api } from '../api/client';
import type { User } from '../api/types';

/** A group of users (docs/groups.md); `everyone` is built in and holds every user. Names are shown as text. */
export interface Group {
  id: string;
  name: string;
  builtin: boolean;
  origin: 'builtin' | 'local' | 'oidc';
  member_count: number;
  created_at: string;
  updated_at: string;
}

export interface Member {
  id: string;
  username: string;
  role: string;
  auth_source: string;
}

/** What a document or a source may be read by: group names. */
export interface Access {
  id: string;
  groups: string[];
}

/** Connectors and integrations both bring documents in, and both have an access of their own. */
export type AccessSource = 'connectors' | 'integrations';

const one = (id: string) => `/api/groups/${encodeURIComponent(id)}`;
const member = (groupId: string, userId: string) => `${one(groupId)}/members/${encodeURIComponent(userId)}`;

export const listGroups = () => api<{ groups: Group[] }>('/api/groups');
export const createGroup = (name: string) => api<Group>('/api/groups', { method: 'POST', body: { name } });
export const renameGroup = (id: string, name: string) => api<Group>(one(id), { method: 'PUT', body: { name } });
export const deleteGroup = (id: string) => api<null>(one(id), { method: 'DELETE' });
export const listMembers = (id: string) => api<{ members: Member[] }>(`${one(id)}/members`);
export const addMember = (groupId: string, userId: string) => api<null>(member(groupId, userId), { method: 'PUT' });
export const removeMember = (groupId: string, userId: string) => api<null>(member(groupId, userId), { method: 'DELETE' });
/** The users an admin may add (the service pages at most 500). */
export const listUsers = () => api<{ users: User[]; total: number }>('/api/auth/users', { query: { limit: 500, offset: 0 } });

export const setDocumentAccess = (id: string, groups: string[]) => api<Access>(`/api/documents/${encodeURIComponent(id)}/access`, { method: 'PUT', body: { groups } });
export const getSourceAccess = (source: AccessSource, id: string) => api<Access>(`/api/${source}/${encodeURIComponent(id)}/access`);
export const setSourceAccess = (source: AccessSource, id: string, groups: string[]) =>
  api<Access>(`/api/${source}/${encodeURIComponent(id)}/access`, { method: 'PUT', body: { groups } });
/** The reader's own groups now (a membership may have changed since sign-in). */
export const myGroups = async () => (await api<User>('/api/auth/me')).groups;
