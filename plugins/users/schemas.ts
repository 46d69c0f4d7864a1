import { Type, type Static } from 'typebox';
import { ROLES } from '../../core/auth/guard.js';
import { PASSWORD_MAX_LENGTH } from '../../core/auth/passwords.js';
import { StringEnum } from '../../core/schemas.js';

const RoleSchema = StringEnum(ROLES);
const UsernameSchema = Type.String({ minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]*$' });
/** Policy beyond length (12+, not the username) is checked by the service, with a clear message. */
export const PasswordSchema = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH });
export const EmailSchema = Type.String({ format: 'email', maxLength: 254 });

export const UserView = Type.Object(
  {
    id: Type.String(),
    username: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    role: RoleSchema,
    groups: Type.Array(Type.String()),
    auth_source: StringEnum(['local', 'oidc'] as const),
    totp_enabled: Type.Boolean({ description: 'Whether a TOTP second factor is enrolled' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'User' },
);
export type UserView = Static<typeof UserView>;

export const UserIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ListUsersQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    username: UsernameSchema,
    password: PasswordSchema,
    role: RoleSchema,
    email: Type.Optional(EmailSchema),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    password: Type.Optional(PasswordSchema),
    role: Type.Optional(RoleSchema),
    email: Type.Optional(Type.Union([EmailSchema, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const UserList = Type.Object({ users: Type.Array(UserView), total: Type.Integer() });
