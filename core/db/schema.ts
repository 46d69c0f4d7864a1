import type { Generated } from 'kysely';
import type { AuditChainAnchorTable, AuditLogTable, AuditSweepGateTable } from './audit-schema.js';
import type { ConversationTurnsTable, ConversationsTable } from './conversations-schema.js';
import type { ChunksTable, ConnectorsTable, DocumentKeywordsTable, DocumentWordsTable, DocumentsTable, IntegrationPagesTable, IntegrationsTable, VocabularyTable } from './documents-schema.js';
import type { SchedulerLeaderLockTable, SchedulesTable } from './schedules-schema.js';
import type { ChunkMetadataTable, ChunkRuleHitsTable, DocumentRuleStateTable, MetadataRulesTable } from './metadata-schema.js';

/** The one typed view of the database. Timestamps are epoch milliseconds; JSON columns are text. */
export interface Database {
  documents: DocumentsTable;
  chunks: ChunksTable;
  document_keywords: DocumentKeywordsTable;
  vocabulary: VocabularyTable;
  document_words: DocumentWordsTable;
  connectors: ConnectorsTable;
  integrations: IntegrationsTable;
  integration_pages: IntegrationPagesTable;
  conversations: ConversationsTable;
  conversation_turns: ConversationTurnsTable;
  users: UsersTable;
  settings: SettingsTable;
  auth_sessions: AuthSessionsTable;
  licences: LicensesTable;
  branding_logo: BrandingLogoTable;
  totp: TotpTable;
  recovery_codes: RecoveryCodesTable;
  mfa_tokens: MfaTokensTable;
  password_reset_tokens: PasswordResetTokensTable;
  oidc_providers: OidcProvidersTable;
  oidc_login_states: OidcLoginStatesTable;
  oidc_identities: OidcIdentitiesTable;
  oidc_handoffs: OidcHandoffsTable;
  metadata_rules: MetadataRulesTable;
  chunk_metadata: ChunkMetadataTable;
  chunk_rule_hits: ChunkRuleHitsTable;
  document_rule_state: DocumentRuleStateTable;
  groups: GroupsTable;
  schedules: SchedulesTable;
  scheduler_leader_lock: SchedulerLeaderLockTable;
  audit_log: AuditLogTable;
  audit_sweep_gate: AuditSweepGateTable;
  audit_chain_anchor: AuditChainAnchorTable;
}

/** Groups (migration 0012). Memberships and document ACLs name them in JSON arrays (users.groups, documents.groups). */
export interface GroupsTable {
  id: string;
  /** Unique in any case; `everyone` is built in. */
  name: string;
  origin: 'builtin' | 'local' | 'oidc';
  created_at: number;
  updated_at: number;
}

export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  role: 'viewer' | 'editor' | 'admin';
  hashed_password: string | null;
  /** JSON array of group names the user is a member of (`everyone` always; the groups table lists them, migration 0012). */
  groups: string;
  auth_source: 'local' | 'oidc';
  /** Tokens issued before this instant (ms) are refused: the per-user revocation watermark. */
  tokens_valid_after: number;
  created_at: number;
  updated_at: number;
}

interface SettingsTable {
  key: string;
  /** JSON-encoded value. */
  value: string;
  updated_at: number;
}

interface AuthSessionsTable {
  id: string;
  user_id: string;
  /** jti of the one refresh token that may still be exchanged; older ones are reuse. */
  refresh_jti: string;
  created_at: number;
  last_used_at: number;
  revoked_at: number | null;
}

export interface LicensesTable {
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

export interface TotpTable {
  user_id: string;
  /** The base32 secret sealed by SecretBox (context "totp:<user id>"); never stored in clear. */
  secret_sealed: string;
  state: 'pending' | 'enrolled';
  /** Time step of the last accepted code: a code of that step or earlier is a replay. */
  last_used_step: number | null;
  created_at: number;
  enrolled_at: number | null;
}

interface RecoveryCodesTable {
  id: string;
  user_id: string;
  /** scrypt with a per-code salt; the code itself is shown once, at enrolment. */
  code_hash: string;
  used_at: number | null;
}

export interface MfaTokensTable {
  /** sha256 of the token handed to the client; the token itself is never stored. */
  id: string;
  user_id: string;
  attempts: number;
  state: 'valid' | 'consumed' | 'invalidated';
  created_at: number;
}

export interface PasswordResetTokensTable {
  id: string;
  user_id: string;
  /** sha256 (hex) of the 32-byte token mailed to the user; the token itself is never stored. */
  token_hash: string;
  created_at: number;
  /** created_at + 30 minutes. */
  expires_at: number;
  /** Set when the token is spent; a spent token is refused. */
  used_at: number | null;
}

export interface OidcProvidersTable {
  id: string;
  /** Used as {provider_id} in the public login paths. */
  name: string;
  display_name: string;
  client_id: string;
  /** SecretBox-sealed with context "oidc:<name>"; null for a public client. */
  client_secret_sealed: string | null;
  discovery_url: string;
  redirect_uri: string;
  scopes: string;
  /** JSON array of group names. */
  admin_groups: string;
  /** 1: the SSRF guard lets this provider's requests reach loopback and private addresses (never metadata). */
  allow_private_network: number;
  created_at: number;
  updated_at: number;
}

/** One started login: looked up by the hash of its state, good once and for 10 minutes. */
export interface OidcLoginStatesTable {
  state_hash: string;
  provider: string;
  code_verifier_sealed: string;
  nonce: string;
  created_at: number;
  consumed_at: number | null;
}

/** Who a returning OIDC user is: (issuer, sub), never the email. */
interface OidcIdentitiesTable {
  issuer: string;
  subject: string;
  provider: string;
  user_id: string;
  created_at: number;
}

/** The one-time code that hands a finished OIDC login to the web UI (60 s, single use). */
interface OidcHandoffsTable {
  code_hash: string;
  user_id: string;
  created_at: number;
  consumed_at: number | null;
}
