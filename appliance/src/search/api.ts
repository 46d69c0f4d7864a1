import { api } from '../api/client';
import type { SearchResult } from '../api/types';

export type SearchMode = 'hybrid' | 'keyword' | 'vector';

export interface SearchResponse {
  results: SearchResult[];
  retrieval_settings: { mode: SearchMode; mode_used: SearchMode; reason?: string };
}

export const search = (query: string, mode: SearchMode, signal?: AbortSignal) =>
  api<SearchResponse>('/api/search', { method: 'POST', body: { query, mode, k: 20 }, signal });
