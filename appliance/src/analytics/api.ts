import { api } from '../api/client';

export interface Distribution {
  count: number;
  min: number | null;
  max: number | null;
  mean: number | null;
  median: number | null;
  p90: number | null;
  buckets: Array<{ from: number; to: number; count: number }>;
}

export interface Coverage {
  chunks_total: number;
  fields: Array<{ field_name: string; chunks_with_value: number; coverage: number; distinct_values: number }>;
}

export interface HitRate {
  rules: Array<{ rule_id: string; field_name: string; level: string; chunks_matched: number; chunk_rate: number; document_rate: number }>;
}

export interface Inheritance {
  fields: Array<{ field_name: string; self_ratio: number; inherited_ratio: number; document_level_ratio: number; empty_ratio: number }>;
}

export interface EmptyMetadata {
  chunks_total: number;
  empty_chunks: number;
  empty_ratio: number;
  sample_document_ids: string[];
}

const get = <T>(source: string, path: string) => api<T>(`/api/analytics/${encodeURIComponent(source)}/${path}`);

export const chunkSizes = (source: string) => get<Distribution>(source, 'chunk-size-distribution');
export const chunksPerDocument = (source: string) => get<Distribution>(source, 'chunks-per-document');
export const coverage = (source: string) => get<Coverage>(source, 'metadata-coverage');
export const hitRate = (source: string) => get<HitRate>(source, 'metadata-hit-rate');
export const inheritance = (source: string) => get<Inheritance>(source, 'inheritance-ratio');
export const emptyMetadata = (source: string) => get<EmptyMetadata>(source, 'empty-metadata');
