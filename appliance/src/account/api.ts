import { api } from '../api/client';
import type { User } from '../api/types';

export interface Enrolment {
  /** An SVG document: shown through an <img> from a data: URL, never as markup. */
  qr_code: string;
  secret: string;
}

export const changeEmail = (email: string) => api<User>('/api/auth/me/email', { method: 'PUT', body: { email } });
export const startEnrolment = () => api<Enrolment>('/api/auth/totp/enroll', { method: 'POST' });
export const confirmEnrolment = (code: string) => api<{ recovery_codes: string[] }>('/api/auth/totp/enroll/confirm', { method: 'POST', body: { totp_code: code } });
export const disableTotp = (code: string) => api<User>('/api/auth/totp/disable', { method: 'POST', body: { totp_code: code } });
export const me = () => api<User>('/api/auth/me');

/** An <img> source for the service's QR SVG: as an image it can run no script, and the CSP allows data: images. */
export const svgImageUrl = (svg: string) => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
