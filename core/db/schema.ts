import type { Generated } from 'kysely';

/** The one typed view of the database. Timestamps are epoch milliseconds; JSON columns are text. */
export interface Database {
  users: UsersTable;
  settings: SettingsTable;
  auth_sessions: AuthSessionsTable;
  licences: LicencesTable;
  branding_logo: BrandingLogoTable;
}

export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  role: 'viewer' | 'editor' | 'admin';
  hashed_password: string | null;
  /** JSON array of group names. */
  groups: string;
  auth_source: 'local' | 'oidc';
  /** Tokens issued before this instant (ms) are refused: the per-user revocation watermark. */
  tokens_valid_after: number;
  created_at: number;
  updated_at: number;
}

export interface SettingsTable {
  key: string;
  /** JSON-encoded value. */
  value: string;
  updated_at: number;
}

export interface AuthSessionsTable {
  id: string;
  user_id: string;
  /** jti of the one refresh token that may still be exchanged; older ones are reuse. */
  refresh_jti: string;
  created_at: number;
  last_used_at: number;
  revoked_at: number | null;
}

export interface LicencesTable {
  id: Generated<number>;
  licence_key: string;
  applied_at: number;
  applied_by: string | null;
}

export interface BrandingLogoTable {
  id: number;
  png: Buffer;
  width: number;
  height: number;
  updated_at: number;
}
