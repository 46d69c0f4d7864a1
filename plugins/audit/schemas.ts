import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

/** The retention PUT /api/audit/config accepts, in days (the delete trigger never lets an entry younger than a day go). */
export const RETENTION_BOUNDS = { min: 1, max: 3650 } as const;

export const BROKEN_REASONS = ['entry_missing', 'previous_hash_mismatch', 'hash_mismatch'] as const;
export type BrokenReason = (typeof BROKEN_REASONS)[number];

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const AuditEntryView = Type.Object(
  {
    id: Type.Integer(),
    time: Type.String({ format: 'date-time' }),
    event: Type.String({ description: 'Event type, e.g. chat.query, config.update, auth.login' }),
    actor: Type.Object({ user_id: NullableString, username: NullableString }, { description: 'Who acted; null fields for an unknown caller (a failed sign-in keeps the username typed)' }),
    client_address: Type.Union([Type.String(), Type.Null()], { description: 'The client address (behind a trusted proxy, X-Forwarded-For)' }),
    target: Type.Union([Type.String(), Type.Null()], { description: 'What the action was about: a user id, a conversation id, a provider name, a setting' }),
    outcome: StringEnum(['success', 'failure'] as const),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'Field names, counts and ids; never secret values' }),
    hash: Type.String({ description: 'HMAC-SHA256 over prev_hash and this entry' }),
    prev_hash: Type.String(),
  },
  { $id: 'AuditEntry' },
);
export type AuditEntryView = Static<typeof AuditEntryView>;

export const AuditListQuery = Type.Object(
  {
    event: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_]+(\\.[a-z_]+)+$', description: 'Only this event type' })),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only entries whose actor has this user id or username' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this instant (ISO 8601)' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or before this instant (ISO 8601)' })),
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const AuditList = Type.Object({ entries: Type.Array(AuditEntryView), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export const AuditIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export const AuditConfigView = Type.Object({
  retention_days: Type.Integer({ description: 'Entries older than this are removed by the daily sweep' }),
  retention_bounds: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
  sweeps_enabled: Type.Boolean({ description: 'RETENTION_SWEEPS_ENABLED' }),
  recording: Type.Boolean({ description: 'True on ENTERPRISE: events are being recorded' }),
});
export const AuditConfigBody = Type.Object(
  { retention_days: Type.Integer({ minimum: RETENTION_BOUNDS.min, maximum: RETENTION_BOUNDS.max, description: `Days, ${RETENTION_BOUNDS.min}..${RETENTION_BOUNDS.max}` }) },
  { additionalProperties: false },
);

export const AuditVerification = Type.Object({
  ok: Type.Boolean(),
  entries_checked: Type.Integer({ description: 'Entries found intact before the first broken link (all of them when ok)' }),
  first_broken: Type.Union([
    Type.Object({ id: Type.Integer({ description: 'The first entry whose link does not hold' }), reason: StringEnum(BROKEN_REASONS) }),
    Type.Null(),
  ]),
});
export type AuditVerification = Static<typeof AuditVerification>;
