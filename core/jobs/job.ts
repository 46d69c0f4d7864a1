import type { JobState } from '../db/documents-schema.js';

export type { JobState };
export const TERMINAL_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];

/** A job snapshot, as GET /api/jobs/{id} returns it. */
export interface Job {
  id: string;
  type: string;
  state: JobState;
  progress: { done: number; total: number; current?: string };
  error?: string;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  /** What the job works on (document ids, connector id…), for the UI. */
  subject?: Record<string, string | string[]>;
}

export interface JobListFilter {
  state?: JobState;
  type?: string;
  limit: number;
  offset: number;
}

/** Where job snapshots live: memory now, Redis later (JOB_STORE_BACKEND). */
export interface JobStore {
  save(job: Job): Promise<void>;
  get(id: string): Promise<Job | undefined>;
  /** Newest first. */
  list(filter: JobListFilter): Promise<{ jobs: Job[]; total: number }>;
  close(): Promise<void>;
}
