import { api } from '../api/client';
import type { License } from '../api/types';

/** GET /api/license: the tier in force, its limits and what is used of them. */
export interface LicenseView extends License {
  licence_id: string | null;
  limits: { documents: number; file_size_bytes: number; storage_bytes: number };
  usage: { documents: number; storage_bytes: number };
}

export const license = () => api<LicenseView>('/api/license');
/** Whitespace in a pasted key is ignored by the service. */
export const applyLicense = (key: string) => api<LicenseView>('/api/license', { method: 'POST', body: { license_key: key.trim() } });
