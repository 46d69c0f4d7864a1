import { api } from '../api/client';

/** One audit entry (docs/audit.md). Every string in it is shown as text. */
export interface AuditEntry {
  id: number;
  time: string;
  event: string;
  actor: { user_id: string | null; username: string | null };
  client_address: string | null;
  target: string | null;
  outcome: 'success' | 'failure';
  details: Record<string, unknown>;
}

export interface AuditFilters {
  event: string;
  user: string;
  /** YYYY-MM-DD, UTC days, inclusive. */
  from: string;
  to: string;
}

export interface AuditConfig {
  retention_days: number;
  retention_bounds: { min: number; max: number };
  sweeps_enabled: boolean;
  recording: boolean;
}

export interface Verification {
  ok: boolean;
  entries_checked: number;
  first_broken: { id: number; reason: string } | null;
}

export const PAGE = 50;
export const EVENT_TYPES = [
  'chat.query', 'sync.all', 'config.update', 'license.apply', 'user.create', 'user.delete',
  'user.role_change', 'auth.login', 'session.revoke', 'totp.enroll', 'totp.clear',
] as const;

const dayStart = (day: string) => (day ? `${day}T00:00:00.000Z` : undefined);
const dayEnd = (day: string) => (day ? `${day}T23:59:59.999Z` : undefined);

export const listAudit = (filters: AuditFilters, offset: number) =>
  api<{ entries: AuditEntry[]; total: number }>('/api/audit', {
    query: { event: filters.event || undefined, user: filters.user.trim() || undefined, from: dayStart(filters.from), to: dayEnd(filters.to), limit: PAGE, offset },
  });
export const auditConfig = () => api<AuditConfig>('/api/audit/config');
export const setRetention = (retention_days: number) => api<AuditConfig>('/api/audit/config', { method: 'PUT', body: { retention_days } });
export const verifyAudit = () => api<Verification>('/api/audit/verify');
