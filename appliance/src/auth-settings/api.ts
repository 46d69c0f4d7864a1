import { api } from '../api/client';

/** Token lifetimes in seconds; the *_admin overrides (ENTERPRISE) are null when admins get the general ones. */
export interface AuthSettings {
  access_token_seconds: number;
  refresh_token_seconds: number;
  access_token_seconds_admin: number | null;
  refresh_token_seconds_admin: number | null;
}

export const ACCESS_RANGE = [60, 86_400] as const;
export const REFRESH_RANGE = [300, 7_776_000] as const;

export const authSettings = () => api<AuthSettings>('/api/admin/auth/settings');
export const changeAuthSettings = (patch: Partial<AuthSettings>) => api<AuthSettings>('/api/admin/auth/settings', { method: 'PATCH', body: patch });
/** Every token issued before now, refresh tokens and the caller's own included, is refused at its next use. */
export const signEveryoneOut = () => api<{ revoked_before: string }>('/api/admin/auth/sessions', { method: 'DELETE' });
