import { Type } from 'typebox';
import { EmailSchema, PasswordSchema } from '../users/index.js';

export const LoginBody = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 256 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

const tokenFields = {
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
};

/** refresh_token is absent only for a client that asked for it as a cookie (`X-Hearth-Refresh: cookie`). */
export const TokenPairView = Type.Object({ ...tokenFields, refresh_token: Type.Optional(tokenFields.refresh_token) }, { $id: 'TokenPair' });

/** The spec's Login result: tokens, or status mfa_required with an mfa_token. */
export const LoginResult = Type.Object({
  access_token: Type.Optional(tokenFields.access_token),
  refresh_token: Type.Optional(tokenFields.refresh_token),
  token_type: Type.Optional(tokenFields.token_type),
  expires_in: Type.Optional(tokenFields.expires_in),
  status: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('mfa_required')])),
  mfa_token: Type.Optional(Type.String()),
});

/** refresh_token is required, except from a client that sends `X-Hearth-Refresh: cookie` (it comes in the cookie). */
export const RefreshBody = Type.Object({ refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })) }, { additionalProperties: false });

export const EmailBody = Type.Object({ email: EmailSchema }, { additionalProperties: false });

export const PasswordChangeBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 1024 }), new_password: PasswordSchema },
  { additionalProperties: false },
);

const lifetime = (min: number, max: number) => Type.Integer({ minimum: min, maximum: max });
const ACCESS_RANGE = [60, 86_400] as const;
const REFRESH_RANGE = [300, 7_776_000] as const;

export const AuthSettingsView = Type.Object({
  access_token_seconds: Type.Integer(),
  refresh_token_seconds: Type.Integer(),
  access_token_seconds_admin: Type.Union([Type.Integer(), Type.Null()]),
  refresh_token_seconds_admin: Type.Union([Type.Integer(), Type.Null()]),
});

export const AuthSettingsPatch = Type.Object(
  {
    access_token_seconds: Type.Optional(lifetime(...ACCESS_RANGE)),
    refresh_token_seconds: Type.Optional(lifetime(...REFRESH_RANGE)),
    access_token_seconds_admin: Type.Optional(Type.Union([lifetime(...ACCESS_RANGE), Type.Null()])),
    refresh_token_seconds_admin: Type.Optional(Type.Union([lifetime(...REFRESH_RANGE), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
