import { api } from '../api/client';
import type { Job, JobState } from '../api/types';

export interface JobQuery {
  state?: JobState;
  type?: string;
  limit: number;
  offset: number;
}

export const listJobs = (query: JobQuery) => api<{ jobs: Job[]; total: number }>('/api/jobs', { query: { ...query } });

export const getJob = (id: string) => api<Job>(`/api/jobs/${encodeURIComponent(id)}`);

export const cancelJob = (id: string) => api<Job>(`/api/jobs/${encodeURIComponent(id)}/cancel`, { method: 'POST' });

export const isFinished = (job: Job) => job.state === 'succeeded' || job.state === 'failed' || job.state === 'cancelled';

/** The job types the service runs, as a reader says them. */
export const JOB_TYPE_LABEL: Record<string, string> = {
  'connector.scan': 'Connector scan',
  'integration.sync': 'Website sync',
  'index.rebuild': 'Index rebuild',
  'index.embed': 'Embedding chunks',
  ingest: 'Indexing uploads',
  'ingest.resume': 'Resumed indexing',
};

export const jobTypeLabel = (type: string) => JOB_TYPE_LABEL[type] ?? type;
