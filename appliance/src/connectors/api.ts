import { api } from '../api/client';
import type { Job } from '../api/types';

/** A folder on this box indexed in place (README: Connectors). `name` and `path` are shown as text. */
export interface Connector {
  id: string;
  name: string;
  path: string;
  recursive: boolean;
  include: string[];
  enabled: boolean;
  last_scan_at: string | null;
  document_count: number;
  created_at: string;
  updated_at: string;
}

export interface ConnectorFields {
  name: string;
  path: string;
  recursive: boolean;
  include: string[];
  enabled: boolean;
}

const one = (id: string) => `/api/connectors/${encodeURIComponent(id)}`;

export const listConnectors = () => api<{ connectors: Connector[]; total: number }>('/api/connectors');
export const createConnector = (fields: ConnectorFields) => api<Connector>('/api/connectors', { method: 'POST', body: fields });
export const updateConnector = (id: string, fields: ConnectorFields) => api<Connector>(one(id), { method: 'PUT', body: fields });
export const deleteConnector = (id: string) => api<void>(one(id), { method: 'DELETE' });
export const scanConnector = (id: string) => api<Job>(`${one(id)}/scan`, { method: 'POST' });
export const syncAllConnectors = () => api<{ jobs: Job[] }>('/api/connectors/sync-all', { method: 'POST' });

export const SCAN_JOB_TYPE = 'connector.scan';
export const connectorOf = (job: Job) => (typeof job.subject?.connector_id === 'string' ? job.subject.connector_id : undefined);

/** "pdf, .MD docx" → [".pdf", ".md", ".docx"]: the service takes the dot as optional, the list reads better with it. */
export const parseExtensions = (text: string) =>
  text
    .split(/[\s,;]+/)
    .filter(Boolean)
    .map((extension) => `.${extension.replace(/^\./, '').toLowerCase()}`);
