import { api } from '../api/client';
import type { Job } from '../api/types';

/** A metadata rule (docs/metadata-rules.md); pattern and values are untrusted text, shown as text. */
export interface Rule {
  id: string;
  source_id: string;
  source_type: 'upload' | 'connector' | 'integration';
  field_name: string;
  pattern: string;
  query_pattern: string | null;
  scope: 'full' | 'header' | 'filename';
  level: 'document' | 'chunk';
  chunk_boundary: boolean;
  priority: number;
  active: boolean;
}

export interface RuleFields {
  field_name: string;
  pattern: string;
  query_pattern: string | null;
  scope: Rule['scope'];
  level: Rule['level'];
  chunk_boundary: boolean;
  priority: number;
}

export interface RuleList {
  rules: Rule[];
  total: number;
  active: boolean;
  inactive_reason?: string;
}

export interface Span {
  start: number;
  end: number;
}

export interface TestResult {
  matched: boolean;
  value: string | null;
  matches: Array<{ text: string; value: string; span: Span; value_span: Span | null }>;
  truncated: boolean;
}

/** A source rules belong to: the uploads, or a connector or website by id. */
export interface RuleSource {
  id: string;
  label: string;
}

const base = (source: string) => `/api/metadata/${encodeURIComponent(source)}`;

export const listRules = (source: string) => api<RuleList>(`${base(source)}/rules`);
export const createRule = (source: string, fields: RuleFields) => api<Rule>(`${base(source)}/rules`, { method: 'POST', body: fields });
export const deleteRule = (source: string, id: string) => api<void>(`${base(source)}/rules/${encodeURIComponent(id)}`, { method: 'DELETE' });
export const testRule = (source: string, pattern: string, text: string) => api<TestResult>(`${base(source)}/test-rule`, { method: 'POST', body: { pattern, text } });
export const refreshRules = (source: string) => api<Job>(`${base(source)}/refresh`, { method: 'POST' });

/** Every source rules can belong to: uploads first, then connectors and websites by name. */
export async function listSources(): Promise<RuleSource[]> {
  const [connectors, integrations] = await Promise.all([
    api<{ connectors: Array<{ id: string; name: string }> }>('/api/connectors'),
    api<{ integrations: Array<{ id: string; name: string }> }>('/api/integrations'),
  ]);
  return [
    { id: 'uploads', label: 'Uploaded documents' },
    ...connectors.connectors.map((c) => ({ id: c.id, label: `Folder: ${c.name}` })),
    ...integrations.integrations.map((i) => ({ id: i.id, label: `Website: ${i.name}` })),
  ];
}
