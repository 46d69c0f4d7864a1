import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

/** Printable text without control characters, at least one visible character. */
const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

/** Names typed by an admin; names from an identity provider's claim may run to 128 characters. */
export const GroupName = Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN, description: 'Unique in any case' });
const AnyGroupName = Type.String({ minLength: 1, maxLength: 128, pattern: NAME_PATTERN });

export const GroupView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    builtin: Type.Boolean({ description: 'True for everyone: every user is in it; it cannot be renamed, deleted or joined by hand' }),
    origin: StringEnum(['builtin', 'local', 'oidc'] as const, { description: 'local: made by an admin; oidc: made from a provider claim at a first sign-in' }),
    member_count: Type.Integer({ minimum: 0 }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Group' },
);

export const GroupList = Type.Object({ groups: Type.Array(GroupView) });
export const GroupIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const MemberParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), userId: Type.String({ minLength: 1, maxLength: 64 }) });
export const GroupBody = Type.Object({ name: GroupName }, { additionalProperties: false });
export type GroupBody = Static<typeof GroupBody>;

export const MemberList = Type.Object({
  members: Type.Array(Type.Object({ id: Type.String(), username: Type.String(), role: Type.String(), auth_source: Type.String() })),
});

export const AccessBody = Type.Object(
  { groups: Type.Array(AnyGroupName, { minItems: 1, maxItems: 50, description: 'Group names allowed to retrieve it; everyone for all users' }) },
  { additionalProperties: false },
);
export type AccessBody = Static<typeof AccessBody>;
export const AccessView = Type.Object({ id: Type.String(), groups: Type.Array(Type.String()) });
export const SourceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
