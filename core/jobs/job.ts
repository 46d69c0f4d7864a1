import type { JobState } from '../db/documents-schema.js';

export type { JobState };
export const TERMINAL_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];

/** A job snapshot, as GET /api/jobs/{id} returns it. */
export interface Job {
  id: string;
  type: string;
  state: JobState;
  /** Items done of total; `pages`: pages done of the current item's (a document read page by page, as OCR does). */
  progress: { done: number; total: number; current?: string; pages?: { done: number; total: number } };
  error?: string;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  /** What the job works on (document ids, connector id…), for the UI. */
  subject?: Record<string, string | string[]>;
  /** What it did, once it reports it (a connector scan's counts, what it skipped and why). */
  result?: JobResult;
}

/** A job's own account of its work; the route schema of its type gives the shape. */
export type JobResult = Record<string, unknown>;

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
