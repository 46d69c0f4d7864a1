import { api, upload } from '../api/client';
import type { DocumentRecord, DocumentStatus } from '../api/types';

export interface DocumentQuery {
  status?: DocumentStatus;
  file_type?: string;
  source_type?: DocumentRecord['source_type'];
  sort: 'created_at' | 'updated_at' | 'filename' | 'size_bytes';
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export const listDocuments = (query: DocumentQuery) =>
  api<{ documents: DocumentRecord[]; total: number }>('/api/docs', { query: query as unknown as Record<string, string | number | undefined> });

export const deleteDocument = (id: string) => api<void>(`/api/docs/${encodeURIComponent(id)}`, { method: 'DELETE' });

export const deleteDocuments = (ids: string[]) => api<{ deleted: string[]; not_found: string[] }>('/api/docs/bulk', { method: 'DELETE', body: { ids } });

export function uploadDocument(file: File, onProgress: (fraction: number) => void, signal?: AbortSignal) {
  const form = new FormData();
  form.append('file', file, file.name);
  return upload<{ document: DocumentRecord }>('/api/docs/upload', form, onProgress, signal);
}

export const isSettled = (status: DocumentStatus) => status === 'indexed' || status === 'failed';
