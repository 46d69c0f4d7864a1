import { api } from '../api/client';
import type { Job } from '../api/types';

export interface IndexStats {
  chunks: number;
  vectors: number;
  dimension: number | null;
  model_id: string | null;
  device: string | null;
  /** Chunks with no vector of the model in force (found by keywords only until embedded). */
  stale_chunks: number;
  database_bytes: number;
  vectors_bytes: number;
  last_rebuild_at: string | null;
  /** The static embedder adapted to the collection (EMBED_ADAPT): where it stands, in the service's words. */
  corpus_adaptation: { state: AdaptationState; detail: string };
}

export type AdaptationState = 'off' | 'waiting' | 'adapting' | 'in_force' | 'failed';

export const indexStats = () => api<IndexStats>('/api/index/stats');
export const rebuildIndex = () => api<Job>('/api/index/rebuild', { method: 'POST' });

export const REBUILD_JOB_TYPE = 'index.rebuild';
/** One index: every rebuild job is about it. */
export const theIndex = () => 'index';
