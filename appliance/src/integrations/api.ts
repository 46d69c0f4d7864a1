import { api } from '../api/client';
import type { Job } from '../api/types';

export interface WebConfig {
  start_url?: string;
  sitemap_url?: string;
  max_depth: number;
  max_pages: number;
  allow_private_network: boolean;
  user_agent?: string;
}

/** Write-only: sent on create or edit, never returned (the view says only `credentials_set`). */
export type Credentials = { username: string; password: string } | { bearer_token: string };

/** A website crawled into the library (README: Integrations). Names and URLs are shown as text. */
export interface Integration {
  id: string;
  name: string;
  kind: 'web';
  config: WebConfig;
  credentials_set: boolean;
  enabled: boolean;
  document_count: number;
  last_sync_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface IntegrationFields {
  name: string;
  config: WebConfig;
  enabled: boolean;
  /** Omitted: keep what is stored; null: remove it. */
  credentials?: Credentials | null;
}

const PAGE = 100;
const one = (id: string) => `/api/integrations/${encodeURIComponent(id)}`;

export const listIntegrations = (offset: number) => api<{ integrations: Integration[]; total: number }>('/api/integrations', { query: { limit: PAGE, offset } });
export const INTEGRATIONS_PAGE_SIZE = PAGE;
export const createIntegration = ({ credentials, ...fields }: IntegrationFields) =>
  api<Integration>('/api/integrations', { method: 'POST', body: { ...fields, kind: 'web', ...(credentials ? { credentials } : {}) } });
export const updateIntegration = (id: string, fields: IntegrationFields) => api<Integration>(one(id), { method: 'PUT', body: fields });
export const deleteIntegration = (id: string) => api<void>(one(id), { method: 'DELETE' });
export const syncIntegration = (id: string) => api<Job>(`${one(id)}/sync`, { method: 'POST' });

export const SYNC_JOB_TYPE = 'integration.sync';
export const integrationOf = (job: Job) => (typeof job.subject?.integration_id === 'string' ? job.subject.integration_id : undefined);
