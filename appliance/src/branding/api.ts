import { api, upload } from '../api/client';
import type { Branding } from '../api/types';

export type BrandingFields = Pick<Branding, 'app_name' | 'tagline' | 'primary_color' | 'accent_color' | 'login_message'>;

/** Replaces the whole configuration: an omitted field returns to its default (`{}` resets all but the logo). */
export const saveBranding = (fields: Partial<BrandingFields>) => api<Branding>('/api/branding', { method: 'PUT', body: fields });

/** PNG, JPEG, WebP, GIF or SVG up to 2 MiB; the service stores it as a PNG of at most 512×512 (an SVG is rasterised). */
export function uploadLogo(file: File, onProgress: (fraction: number) => void) {
  const form = new FormData();
  form.append('file', file, file.name);
  return upload<Branding>('/api/branding/logo', form, onProgress);
}

export const LOGO_TYPES = 'image/png,image/jpeg,image/webp,image/gif,image/svg+xml';
