/** The shapes of the service's answers this UI reads (README.md documents them). */

export type Role = 'viewer' | 'editor' | 'admin';
export type Tier = 'FREE' | 'PRO' | 'ENTERPRISE';

export interface User {
  id: string;
  username: string;
  email: string | null;
  role: Role;
  groups: string[];
  auth_source: 'local' | 'oidc';
  totp_enabled: boolean;
  created_at?: string;
  updated_at?: string;
}

export interface TokenPair {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export type LoginResult = TokenPair | { status: 'mfa_required'; mfa_token: string };

export interface Branding {
  app_name: string;
  tagline: string;
  primary_color: string;
  accent_color: string;
  login_message: string;
  logo_url: string | null;
  updated_at: string | null;
}

export interface License {
  tier: Tier;
  licensee: string | null;
  expires_at: string | null;
  expired: boolean;
}

export interface OidcProviderButton {
  name: string;
  display_name: string;
  login_url: string;
}

export interface Source {
  marker: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page?: number;
  heading?: string;
  score: number;
  text: string;
}

export interface TokenBudget {
  limit: number;
  estimated_prompt: number;
  reserved_completion: number;
  chunks_dropped: number;
  turns_dropped: number;
}

export interface ChatMetadata {
  conversation_id: string;
  sources: Source[];
  token_budget: TokenBudget | null;
  retrieval_settings: Record<string, unknown>;
  timing: { classify: number; retrieve: number; generate: number };
  mode: 'generative' | 'extractive';
}

export interface ConversationSummary {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  turns: number;
}

export interface StoredTurn {
  query: string;
  answer: string;
  sources: Source[];
  mode: 'generative' | 'extractive';
  created_at: string;
}

export interface Conversation {
  id: string;
  title: string;
  turns: StoredTurn[];
}

export type DocumentStatus = 'queued' | 'indexing' | 'indexed' | 'failed';

export interface DocumentRecord {
  id: string;
  filename: string;
  file_type: string;
  mime_type: string;
  size_bytes: number;
  source_type: 'upload' | 'connector' | 'integration';
  source_id: string | null;
  status: DocumentStatus;
  error: string | null;
  page_count: number | null;
  chunk_count: number;
  /** The groups allowed to read it (only everyone below ENTERPRISE); names are shown as text. */
  groups: string[];
  created_at: string;
  updated_at: string;
  indexed_at: string | null;
}

export interface SearchResult {
  rank: number;
  score: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page?: number;
  heading?: string;
  text: string;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A background job (connector scan, integration sync, index rebuild, ingest); `progress.current` is untrusted text. */
export interface Job {
  id: string;
  type: string;
  state: JobState;
  progress: { done: number; total: number; current?: string };
  error?: string;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  subject?: Record<string, string | string[]>;
}
