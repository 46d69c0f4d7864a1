import { api, REFRESH_COOKIE_HEADER } from '../api/client';
import type { LoginResult, OidcProviderButton, TokenPair } from '../api/types';

/** The sign-in folder's calls; every token pair asks for the refresh token as the HttpOnly cookie. */

export const login = (username: string, password: string) =>
  api<LoginResult>('/api/auth/login', { method: 'POST', body: { username, password }, headers: REFRESH_COOKIE_HEADER });

export const secondFactor = (mfaToken: string, code: string) =>
  api<TokenPair>('/api/auth/totp/mfa-login', { method: 'POST', body: { mfa_token: mfaToken, totp_code: code }, headers: REFRESH_COOKIE_HEADER });

export const ssoProviders = () => api<OidcProviderButton[]>('/api/auth/oidc/providers');

export const forgotPassword = (email: string) => api<{ message: string }>('/api/auth/forgot-password', { method: 'POST', body: { email } });

export const resetPassword = (token: string, newPassword: string) =>
  api<unknown>('/api/auth/reset-password', { method: 'POST', body: { token, new_password: newPassword } });
